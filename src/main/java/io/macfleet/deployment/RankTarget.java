package io.macfleet.deployment;

import io.macfleet.ssh.SshTarget;

/**
 * One rank of a cluster as the deployment sees it: its machine, how to reach it over SSH, the address its peers and
 * the control host use (management), its memory (its weight) and its ports.
 */
public record RankTarget(int rank, String machine, SshTarget ssh, String managementAddress, int memoryGb, int httpPort,
                         int clusterPort) {
    public RankTarget {
        if (rank < 0) {
            throw new IllegalArgumentException("rank must be 0 or more, got " + rank);
        }
        if (managementAddress == null || managementAddress.isBlank()) {
            throw new IllegalArgumentException(machine + " has no address: the ranks and the control host reach it there");
        }
        for (int port : new int[] {httpPort, clusterPort}) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException(machine + ": port " + port + " is not between 1 and 65535");
            }
        }
    }

    /** The TCP port of the rank-to-rank mesh on real Macs (the node's default). */
    public static final int CLUSTER_PORT = 52600;

    /**
     * A rank with the cluster's HTTP port. Ranks on loopback addresses (simulated Macs: one host) cannot share ports, as
     * the node listens on every interface: there rank r takes {@code port + 2r} for HTTP and {@code port + 2r + 1} for
     * the mesh. On real Macs every rank uses {@code port} and {@value #CLUSTER_PORT}.
     */
    public static RankTarget of(int rank, String machine, SshTarget ssh, String managementAddress, int memoryGb, int port) {
        boolean loopback = managementAddress != null && (managementAddress.startsWith("127.") || managementAddress.equals("localhost"));
        return loopback
                ? new RankTarget(rank, machine, ssh, managementAddress, memoryGb, port + 2 * rank, port + 2 * rank + 1)
                : new RankTarget(rank, machine, ssh, managementAddress, memoryGb, port, CLUSTER_PORT);
    }
}
