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
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            metric(out, "inference_node_process_cpu_microseconds", "counter", "CPU time this rank's process used.", os.getProcessCpuTime() / 1000);
        }
        return out.toString();
    }

    private static void metric(StringBuilder out, String name, String type, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(' ').append(type).append('\n')
                .append(name).append(' ').append(value).append('\n');
    }
}
