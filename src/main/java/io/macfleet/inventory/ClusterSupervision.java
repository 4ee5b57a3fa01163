package io.macfleet.inventory;

/**
 * What the node supervision may do on its own for a cluster (inventory {@code supervision:}).
 *
 * @param rebootOnRdmaFailure {@code rdmaFailure: reboot}: after an RDMA failure, reboot every machine of the cluster
 *                            together, verify RDMA and start the node; the default {@code recommend} only alerts
 */
public record ClusterSupervision(boolean rebootOnRdmaFailure) {

    public static final ClusterSupervision DEFAULT = new ClusterSupervision(false);
}
