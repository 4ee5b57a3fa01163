package io.macfleet.node.cluster;

import java.io.PrintStream;

/**
 * Predicts decode tokens/s of a cluster. Decode is bandwidth-bound: each token costs the weights a rank reads
 * divided by the bandwidth that rank gets, plus the collectives, plus a fixed per-token cost (sampling, command).
 * <p>
 * The bandwidth a rank gets is the lesser of what one rank reaches alone ({@code rankBandwidth}) and its share of
 * its host's memory system ({@code hostBandwidth / ranksPerHost}): ranks on one host read their weights at the same
 * time from one memory system (the loopback cluster here), ranks on separate Macs each have their own.
 * <pre>
 *   tensor:   seconds per token = weightBytes / ranks / min(rankBandwidth, hostBandwidth / ranksPerHost)
 *                               + 2 * layers * (allReduceLatency + hidden * 4 * (ranks - 1) / linkBandwidth)
 *                               + fixed
 *   pipeline: seconds per token = weightBytes / rankBandwidth   (the stages run one after another, each alone)
 *                               + ranks * (hopLatency + hidden * 4 / linkBandwidth)
 *                               + fixed
 * </pre>
 *
 * @param weightBytes      bytes of weights one token reads in the whole model
 * @param rankBandwidth    bytes/s the engine streams weights at in one rank alone (its threads, its kernels)
 * @param hostBandwidth    bytes/s all ranks of one host together can stream; at least rankBandwidth
 * @param layers           transformer layers (two all-reduces each in tensor parallelism)
 * @param hidden           hidden size (floats per all-reduce and per pipeline hop)
 * @param fixedSeconds     per-token cost outside the weight reads and collectives
 */
public record PerformanceModel(double weightBytes, double rankBandwidth, double hostBandwidth, int layers, int hidden,
                               double fixedSeconds) {

    public PerformanceModel {
        if (weightBytes <= 0 || rankBandwidth <= 0 || hostBandwidth <= 0 || layers <= 0 || hidden <= 0 || fixedSeconds < 0) {
            throw new IllegalArgumentException("performance model inputs must be positive: bytes " + weightBytes
                    + ", rank bandwidth " + rankBandwidth + ", host bandwidth " + hostBandwidth + ", layers " + layers
                    + ", hidden " + hidden + ", fixed " + fixedSeconds);
        }
    }

    /** Each rank on its own machine with its own memory system (real Macs): host bandwidth = rank bandwidth. */
    public static PerformanceModel separateHosts(double weightBytes, double rankBandwidth, int layers, int hidden, double fixedSeconds) {
        return new PerformanceModel(weightBytes, rankBandwidth, rankBandwidth, layers, hidden, fixedSeconds);
    }

    /** Where a token's time goes, in seconds. */
    public record Prediction(double weightSeconds, double collectiveSeconds, double fixedSeconds) {
        public double seconds() {
            return weightSeconds + collectiveSeconds + fixedSeconds;
        }

        public double tokensPerSecond() {
            return 1 / seconds();
        }
    }

    /** The bandwidth one of {@code ranksPerHost} ranks reading at once on one host gets. */
    public double bandwidthPerRank(int ranksPerHost) {
        return Math.min(rankBandwidth, hostBandwidth / ranksPerHost);
    }

    /** Tensor parallelism over {@code ranks}, {@code ranksPerHost} of them on each host. */
    public Prediction tensor(int ranks, int ranksPerHost, double allReduceLatencySeconds, double linkBytesPerSecond) {
        if (ranks < 1 || ranksPerHost < 1 || ranksPerHost > ranks) {
            throw new IllegalArgumentException("ranks " + ranks + " with " + ranksPerHost + " per host");
        }
        double weights = weightBytes / ranks / bandwidthPerRank(ranksPerHost);
        double collectives = ranks == 1 ? 0
                : 2.0 * layers * (allReduceLatencySeconds + (double) hidden * Float.BYTES * (ranks - 1) / linkBytesPerSecond);
        return new Prediction(weights, collectives, fixedSeconds);
    }

    /**
     * Tensor parallelism over separate hosts with the layers split by {@code weights} (memory-weighted: a rank holds
     * its weight's share of heads and experts): the rank with the largest share sets the pace. {@code replicatedBytes}
     * of every token's weights are read by every rank (deepseek2's low-rank query and latent projections, which each
     * rank needs whole). Experts are assumed to be chosen in proportion to where they are.
     */
    public Prediction tensorWeighted(double[] weights, double replicatedBytes, double allReduceLatencySeconds,
                                     double linkBytesPerSecond) {
        double total = 0, largest = 0;
        for (double weight : weights) {
            total += weight;
            largest = Math.max(largest, weight);
        }
        int ranks = weights.length;
        double bytes = largest / total * (weightBytes - replicatedBytes) + replicatedBytes;
        double collectives = ranks == 1 ? 0
                : 2.0 * layers * (allReduceLatencySeconds + (double) hidden * Float.BYTES * (ranks - 1) / linkBytesPerSecond);
        return new Prediction(bytes / rankBandwidth, collectives, fixedSeconds);
    }

    /**
     * DeepSeek V3.1 (671B, 37B active, 61 layers, hidden 7168) as Q4_K_M (a 404 GB file: 4.82 bits per weight, so
     * 22.3 GB read per token) on 4 M3 Ultra Mac Studios of 512, 512, 256 and 256 GB, memory-weighted 2:2:1:1, against
     * exo's published 32.5 tokens/s. Assumptions (docs/inference-node-cluster.md): 100 us per all-reduce (what the
     * exo check solves to on 4 nodes), 10 GB/s links, 0.56 GB of replicated latent projections, 2 ms fixed per token;
     * the effective bandwidth either 60% of 819 GB/s (the 70B table's assumption) or the 242 GB/s that calibrates the
     * model on exo's one-node Qwen3-235B figure.
     */
    public static void printDeepSeekV31Prediction(PrintStream out) {
        double[] memoryWeighted = {512, 512, 256, 256};
        out.println("predicted decode tokens/s, DeepSeek V3.1 Q4_K_M on 4 M3 Ultra (2x512 + 2x256 GB), exo: 32.5:");
        out.printf("%-34s %14s %14s%n", "effective bandwidth", "memory-weighted", "even split");
        for (double bandwidth : new double[] {0.6 * 819e9, 12.4e9 * 19.5}) {
            PerformanceModel model = separateHosts(22.3e9, bandwidth, 61, 7168, 0.002);
            out.printf("%-34s %14.1f %14.1f%n", String.format("%.0f GB/s", bandwidth / 1e9),
                    model.tensorWeighted(memoryWeighted, 0.56e9, 100e-6, 10e9).tokensPerSecond(),
                    model.tensorWeighted(new double[] {1, 1, 1, 1}, 0.56e9, 100e-6, 10e9).tokensPerSecond());
        }
    }

    /**
     * Collectives per decoded token in tensor parallelism the model charges: two all-reduces per layer. The gather of
     * the vocabulary-parallel logits on rank 0 is one more message, not charged (under 1/(2 x layers) of the total).
     */
    public static int collectivesPerToken(int layers) {
        return 2 * layers;
    }

    /** Pipeline parallelism over {@code ranks} stages: one token passes every stage in turn and returns to rank 0. */
    public Prediction pipeline(int ranks, double hopLatencySeconds, double linkBytesPerSecond) {
        double hops = ranks == 1 ? 0 : ranks * (hopLatencySeconds + (double) hidden * Float.BYTES / linkBytesPerSecond);
        return new Prediction(weightBytes / rankBandwidth, hops, fixedSeconds);
    }

    /** Tokens/s of tensor parallelism with every rank on its own host. */
    public double tokensPerSecond(int ranks, double linkLatencySeconds, double linkBytesPerSecond) {
        return tensor(ranks, 1, linkLatencySeconds, linkBytesPerSecond).tokensPerSecond();
    }

    /**
     * The model against exo's published RDMA figures (Jeff Geerling, 4 M3 Ultra): Qwen3-235B-A22B (94 layers,
     * hidden 4096, about 22B active parameters at about 4.5 bits: 12.4 GB read per token), with the effective
     * bandwidth calibrated so that one node gives exo's 19.5 tokens/s.
     */
    public static void printExoCheck(PrintStream out) {
        double bytes = 12.4e9;
        PerformanceModel model = separateHosts(bytes, bytes * 19.5, 94, 4096, 0);
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
        PerformanceModel model = separateHosts(39.5e9, 0.6 * 819e9, 80, 8192, 0.002);
        out.println("predicted decode tokens/s, 70B dense 4-bit on M3 Ultra (60% of 819 GB/s, 2 ms fixed per token):");
        out.printf("%-8s %12s %12s%n", "nodes", "RDMA 50 us", "TCP 300 us");
        for (int nodes : new int[] {1, 2, 4}) {
            out.printf("%-8d %12.1f %12.1f%n", nodes, model.tokensPerSecond(nodes, 50e-6, 10e9),
                    model.tokensPerSecond(nodes, 300e-6, 10e9));
        }
    }
}
