package io.macfleet.supervision;

import java.time.Instant;
import java.util.List;

/** One look at every rank of a cluster, taken together. */
public record ClusterObservation(SupervisedCluster cluster, Instant at, List<RankObservation> ranks) {

    public ClusterObservation {
        ranks = List.copyOf(ranks);
    }

    /** Every rank answers /health with 200: the cluster is formed and serves. */
    public boolean serving() {
        return !ranks.isEmpty() && ranks.stream().allMatch(rank -> rank.health() == RankObservation.Health.SERVING);
    }
}
