package io.macfleet.supervision;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jboss.logging.Logger;

/**
 * The latest supervision status of every cluster as this instance answers for it, the same on every instance of one
 * database: its own look at the clusters it supervises (kept in memory after each round, and written to the
 * database), the stored look of the instance that supervises each of the others.
 * <p>
 * Staleness: a look older than {@link #staleAfter(Duration)} (three supervision intervals, at least 30 seconds) is
 * stale. The supervisor writes after every look, so a stale status means it stopped looking: its instance is gone
 * and no other has taken the lease yet, its round is stuck, or supervision was switched off. (Restarts and reboots run
 * beside the rounds, so a coordinated reboot does not make its cluster's status stale.) The 30-second floor keeps one slow round (SSH and /health timeouts of a few seconds per rank) from
 * marking a status stale at the default 5-second interval.
 */
final class SharedStatuses {

    private static final Logger LOG = Logger.getLogger(SharedStatuses.class);
    static final int STALE_AFTER_INTERVALS = 3;
    static final Duration MINIMUM_STALE_AFTER = Duration.ofSeconds(30);

    private final SupervisionStatusStore store;
    private final String instance;
    private final Duration staleAfter;
    private final Clock clock;
    private volatile Map<String, SharedStatus.Observed> own = Map.of();

    /**
     * @param instance this instance's name in the rows it writes (its lease holder id)
     * @param interval {@code macfleet.supervision.interval}
     */
    SharedStatuses(SupervisionStatusStore store, String instance, Duration interval, Clock clock) {
        this.store = store;
        this.instance = instance;
        this.staleAfter = staleAfter(interval);
        this.clock = clock;
    }

    /** How old a look may be before it is shown as stale: three supervision intervals, and never less than 30 seconds. */
    static Duration staleAfter(Duration interval) {
        Duration intervals = interval.multipliedBy(STALE_AFTER_INTERVALS);
        return intervals.compareTo(MINIMUM_STALE_AFTER) < 0 ? MINIMUM_STALE_AFTER : intervals;
    }

    String instance() {
        return instance;
    }

    /**
     * After a round: what this instance looked at becomes its own status and is written to the database (a write that
     * fails is logged, and supervision goes on); the rows of clusters that are no longer to be supervised go.
     *
     * @param seen the round's statuses: the clusters whose lease this instance holds
     * @param processSince per cluster and rank, since when the rank's current process was seen
     * @param supervisable every cluster of the inventory with a finished deployment, whoever supervises it
     * @param supervisableAsOf when the inventory and the deployments were read for {@code supervisable}
     */
    void afterRound(List<ClusterStatus> seen, Map<String, Map<Integer, Instant>> processSince, Set<String> supervisable,
                    Instant supervisableAsOf) {
        Map<String, SharedStatus.Observed> looked = new TreeMap<>();
        for (ClusterStatus status : seen) {
            Map<Integer, Instant> since = processSince.getOrDefault(status.name(), Map.of());
            looked.put(status.name(), new SharedStatus.Observed(status, since, instance, false));
            try {
                store.save(status, since, instance);
            } catch (RuntimeException e) {
                LOG.warnf("the supervision status of cluster %s was not stored (other instances show the previous one): %s",
                        status.name(), e.getMessage());
            }
        }
        own = Map.copyOf(looked);
        try {
            store.keepOnly(supervisable, supervisableAsOf);
        } catch (RuntimeException e) {
            LOG.warnf("the supervision statuses of removed clusters were not deleted: %s", e.getMessage());
        }
    }

    /** Every cluster's latest status, by name: this instance's own look where it supervises, else the stored one. */
    List<SharedStatus> all() {
        Instant staleBefore = clock.instant().minus(staleAfter);
        Map<String, SharedStatus> byCluster = new TreeMap<>();
        try {
            store.all(staleBefore).forEach(status -> byCluster.put(status.cluster(), status));
        } catch (RuntimeException e) {
            // The database is unavailable: this instance still answers for the clusters it supervises.
            LOG.warnf("the supervision statuses of other instances cannot be read: %s", e.getMessage());
        }
        own.values().forEach(status -> byCluster.put(status.cluster(),
                new SharedStatus.Observed(status.status(), status.processSince(), instance, status.observedAt().isBefore(staleBefore))));
        return List.copyOf(byCluster.values());
    }
}
