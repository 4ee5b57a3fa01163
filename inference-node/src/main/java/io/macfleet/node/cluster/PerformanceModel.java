package io.macfleet.node.cluster;

import java.io.PrintStream;

/**
 * Predicts decode tokens/s of a tensor-parallel cluster: each token costs the weights a rank reads divided by
 * its memory bandwidth (decode is bandwidth-bound), plus two all-reduces per layer, each a link latency plus the
 * hidden vector's bytes over the link, plus a fixed per-token cost (sampling, command, logits).
 * <pre>
 *   seconds per token = weightBytes / ranks / effectiveBandwidth + 2 * layers * (latency + hidden * 4 (ranks - 1) / linkBandwidth) + fixed
 * </pre>
 */
public record PerformanceModel(double weightBytes, double effectiveBandwidth, int layers, int hidden, double fixedSeconds) {

    public double secondsPerToken(int ranks, double linkLatencySeconds, double linkBytesPerSecond) {
        double compute = weightBytes / ranks / effectiveBandwidth;
        double collectives = ranks == 1 ? 0
                : 2.0 * layers * (linkLatencySeconds + (double) hidden * Float.BYTES * (ranks - 1) / linkBytesPerSecond);
        return compute + collectives + fixedSeconds;
    }

    public double tokensPerSecond(int ranks, double linkLatencySeconds, double linkBytesPerSecond) {
        return 1 / secondsPerToken(ranks, linkLatencySeconds, linkBytesPerSecond);
    }

    /**
     * The model against exo's published RDMA figures (Jeff Geerling, 4 M3 Ultra): Qwen3-235B-A22B (94 layers,
     * hidden 4096, about 22B active parameters at about 4.5 bits: 12.4 GB read per token), with the effective
     * bandwidth calibrated so that one node gives exo's 19.5 tokens/s.
     */
    public static void printExoCheck(PrintStream out) {
        double bytes = 12.4e9;
        PerformanceModel model = new PerformanceModel(bytes, bytes * 19.5, 94, 4096, 0);
        double[] published = {19.5, 26.2, 31.9};
        int[] nodes = {1, 2, 4};
        out.println("model against exo over RDMA, Qwen3-235B-A22B on M3 Ultra (calibrated on 1 node):");
        out.printf("%-8s %12s %12s%n", "nodes", "predicted", "exo RDMA");
        for (int i = 0; i < nodes.length; i++) {
            out.printf("%-8d %12.1f %12.1f%n", nodes[i], model.tokensPerSecond(nodes[i], 50e-6, 10e9), published[i]);
        }
    }

    /**
     * A 70B dense Llama (80 layers, hidden 8192) at 4-bit (about 4.5 bits per weight with scales: 39.5 GB read per
     * token) on M3 Ultra Mac Studios (819 GB/s); effective bandwidth 60% of peak (an assumption, stated in the docs);
     * Thunderbolt 5 at 80 Gb/s (10 GB/s); 50 us per all-reduce over RDMA, 300 us over TCP.
     */
    public static void printM3UltraTable(PrintStream out) {
        PerformanceModel model = new PerformanceModel(39.5e9, 0.6 * 819e9, 80, 8192, 0.002);
        out.println("predicted decode tokens/s, 70B dense 4-bit on M3 Ultra (60% of 819 GB/s, 2 ms fixed per token):");
        out.printf("%-8s %12s %12s%n", "nodes", "RDMA 50 us", "TCP 300 us");
        for (int nodes : new int[] {1, 2, 4}) {
            out.printf("%-8d %12.1f %12.1f%n", nodes, model.tokensPerSecond(nodes, 50e-6, 10e9),
                    model.tokensPerSecond(nodes, 300e-6, 10e9));
        }
    }
}
