package io.macfleet.supervision;

import java.net.URI;
import java.util.List;
import java.util.Objects;

/**
 * A deployed cluster as the supervisor sees it: which machine runs which rank, under which launchd label, where
 * each rank answers /health and /metrics, and what the cluster's policy allows.
 *
 * @param endpoint rank 0's OpenAI-compatible API (what clients use)
 * @param ranks in rank order, rank 0 first
 */
public record SupervisedCluster(String name, URI endpoint, Policy policy, List<Rank> ranks) {

    public SupervisedCluster {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(policy, "policy");
        ranks = List.copyOf(ranks);
        if (ranks.isEmpty()) {
            throw new IllegalArgumentException("cluster " + name + " has no ranks to supervise");
        }
        for (int index = 0; index < ranks.size(); index++) {
            if (ranks.get(index).rank() != index) {
                throw new IllegalArgumentException("cluster " + name + ": ranks must be listed 0.." + (ranks.size() - 1)
                        + " in order, found rank " + ranks.get(index).rank() + " at position " + index);
            }
        }
    }

    /**
     * One rank.
     *
     * @param node where the rank's HTTP server answers, e.g. http://10.0.0.12:8080/ (health and metrics)
     * @param daemonLabel the node's LaunchDaemon label on that machine
     * @param logPath the daemon's standard error file (the node writes its log there)
     */
    public record Rank(int rank, String machine, URI node, String daemonLabel, String logPath) {
    }

    /** What the supervisor may do on its own for this cluster (the inventory's {@code supervision} settings). */
    public record Policy(boolean rebootOnRdmaFailure) {
        public static final Policy RECOMMEND_ONLY = new Policy(false);
    }

    /** The command an operator runs to put the same node version and model on every machine. */
    public String deployCommand() {
        return "macfleet node deploy " + name;
    }
}
