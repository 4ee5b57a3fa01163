package io.macfleet.node.cluster;

/** The cluster lines of a rank's /metrics (Prometheus text format). */
public final class ClusterMetrics {
    private ClusterMetrics() {
    }

    public static String render(ClusterNode node) {
        StringBuilder out = new StringBuilder();
        metric(out, "inference_node_cluster_rank", "gauge", "This node's rank.", node.rank());
        metric(out, "inference_node_cluster_ranks", "gauge", "Ranks in the cluster file.", node.cluster().size());
        metric(out, "inference_node_cluster_complete", "gauge", "1 when every rank is connected.", node.problem() == null ? 1 : 0);
        metric(out, "inference_node_shard_weight_bytes", "gauge", "Weight bytes this rank reads per token (its shard plus replicated parts).", node.shardBytes());
        metric(out, "inference_node_kv_cache_bytes", "gauge", "This rank's KV cache bytes.", node.kvCacheBytes());
        metric(out, "inference_node_cluster_bytes_sent", "counter", "Bytes this rank sent to peers since the cluster last formed.", node.bytesSent());
        metric(out, "inference_node_cluster_wait_microseconds", "counter", "Microseconds this rank waited for peers' messages since the cluster last formed.", node.waitNanos() / 1000);
        WaitPolicy waits = node.waitPolicy();
        if (waits != null) {
            metric(out, "inference_node_cluster_wait_spin_microseconds", "gauge", "How long a receive spins before it parks (250000: spins through a stage; see -Dmacfleet.node.wait).", waits.spinNanos() / 1000);
            metric(out, "inference_node_cluster_spins_preempted", "counter", "Long spins cut short since the cluster formed because the rank lost its core (it then parks for 1 s).", node.spinsPreempted());
        }
        long[] forward = node.forwardTimes();
        metric(out, "inference_node_cluster_forward_microseconds", "counter", "Wall time of this rank's forward passes.", forward[0] / 1000);
        metric(out, "inference_node_cluster_allreduce_wait_microseconds", "counter", "Of the forward passes' wall time, microseconds waiting for peers in all-reduces.", forward[1] / 1000);
        metric(out, "inference_node_cluster_gather_wait_microseconds", "counter", "Of the forward passes' wall time, microseconds rank 0 waited for the other ranks' logits.", forward[2] / 1000);
        long[] phases = node.phaseNanos();
        if (phases != null) {
            io.macfleet.node.model.LlamaModel.Phase[] names = io.macfleet.node.model.LlamaModel.Phase.values();
            out.append("# HELP inference_node_phase_microseconds Wall time of each part of this rank's forward passes (profiling on).\n")
                    .append("# TYPE inference_node_phase_microseconds counter\n");
            for (io.macfleet.node.model.LlamaModel.Phase phase : names) {
                out.append("inference_node_phase_microseconds{phase=\"").append(phase.name()).append("\"} ")
                        .append(phases[phase.ordinal()] / 1000).append('\n');
            }
        }
        String version = node.identity("node version");
        if (version != null) {
            // Lets a supervisor compare ranks' versions and models before the handshake refuses one (labels, value 1).
            out.append("# HELP inference_node_info This rank's node version and model identity.\n")
                    .append("# TYPE inference_node_info gauge\n")
                    .append("inference_node_info{version=\"").append(label(version)).append("\",model=\"")
                    .append(label(node.identity("model"))).append("\"} 1\n");
        }
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            metric(out, "inference_node_process_cpu_microseconds", "counter", "CPU time this rank's process used.", os.getProcessCpuTime() / 1000);
        }
        return out.toString();
    }

    private static String label(String value) {
        return value == null ? "" : value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static void metric(StringBuilder out, String name, String type, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(' ').append(type).append('\n')
                .append(name).append(' ').append(value).append('\n');
    }
}
