package io.macfleet.supervision;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Optional;

/**
 * A cluster's latest supervision status as every {@code macfleet serve} on one database tells it: the look of the
 * instance that supervises the cluster (this instance's own, or another's read from the database), or a stored row
 * this version cannot read. A status older than the staleness window (see {@link SharedStatuses}) is {@link #stale()}:
 * its supervisor has stopped looking, so it is shown as "last seen by ... at ...", never as the current state.
 */
public sealed interface SharedStatus {

    String cluster();

    /** When the supervisor looked. */
    Instant observedAt();

    /** The instance that looked: its lease holder id ({@code PID@HOST/RANDOM}, see {@link io.macfleet.lease.LeaseOwners}). */
    String observedBy();

    /** No look for longer than the staleness window: what it says may no longer hold. */
    boolean stale();

    /** "last seen by INSTANCE at TIME UTC": how a stale status is presented. */
    default String lastSeen() {
        return "last seen by " + observedBy() + " at " + utc(observedAt());
    }

    /**
     * A status that was read.
     *
     * @param processSince per rank, since when the supervisor saw the rank's current process (its uptime's start)
     */
    record Observed(ClusterStatus status, Map<Integer, Instant> processSince, String observedBy, boolean stale) implements SharedStatus {

        public Observed {
            processSince = Map.copyOf(processSince);
        }

        @Override
        public String cluster() {
            return status.name();
        }

        @Override
        public Instant observedAt() {
            return status.observation().at();
        }

        /** How long the rank's current process has run, as far as its supervisor saw it (from its first look at the pid). */
        public Optional<Duration> uptime(RankObservation rank, Instant now) {
            if (rank.pid().isEmpty()) {
                return Optional.empty();
            }
            return Optional.ofNullable(processSince.get(rank.rank())).map(since -> Duration.between(since, now));
        }

        /** {@link #uptime} as the supervision page and {@code macfleet supervision} print it: "45 s", "12 min", "3 h". */
        public Optional<String> uptimeText(RankObservation rank, Instant now) {
            return uptime(rank, now).map(Duration::toSeconds)
                    .map(seconds -> seconds < 120 ? seconds + " s" : seconds < 7200 ? seconds / 60 + " min" : seconds / 3600 + " h");
        }
    }

    /**
     * A stored status this version cannot read (written by a newer version, or damaged): shown as such for its
     * cluster, and the other clusters are unaffected.
     *
     * @param problem why it cannot be read
     */
    record Unreadable(String cluster, Instant observedAt, String observedBy, boolean stale, String problem) implements SharedStatus {

        /** The sentence operators read in place of the diagnosis. */
        public String explain() {
            return "unreadable status (stored by " + observedBy + " at " + SharedStatus.utc(observedAt) + "): " + problem;
        }
    }

    /** A time as the console and {@code macfleet supervision} print it: "2026-11-24 09:25:30 UTC". */
    static String utc(Instant instant) {
        return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC).format(instant);
    }
}
