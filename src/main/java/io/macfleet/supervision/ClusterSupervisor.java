package io.macfleet.supervision;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Decides and acts for the clusters this instance holds the lease of. One call of {@link #observe} per look:
 * <ul>
 *   <li>serving: nothing to do (an earlier incident is closed with a "recovered" event);</li>
 *   <li>a rank down or not formed: launchd's KeepAlive and the node's own re-forming get {@code restartAfter} to
 *       fix it (at once when launchd restarted a rank and it still fails: a crash loop); then every rank is restarted,
 *       rank 0 first, with a doubling back-off between attempts; after {@code attempts} restarts without the cluster
 *       serving again the supervisor stops and alerts;</li>
 *   <li>a version or model skew: never restarted (it would be refused again); one alert naming the rank and the
 *       deploy that fixes it;</li>
 *   <li>RDMA failure: a coordinated reboot of every machine when the policy allows it, once per incident; otherwise
 *       one alert recommending it.</li>
 * </ul>
 * An action is ordered at most once per decision point: state changes before the action runs, so a failing or
 * slow action is never repeated by the next look, only by the next back-off step. The decisions themselves are a pure
 * function in {@link SupervisionDecision}; the phases and which may follow which are in {@link ClusterPhase}.
 * <p>
 * Actions run on the executor given (the service's: a virtual thread each), not in the look that ordered them: a
 * coordinated reboot takes minutes, and the other clusters' looks must not wait for it. While a cluster's action
 * runs, its looks report what they see with {@link ClusterStatus#acting()} and change nothing: a look in the middle
 * of a reboot sees machines down, which is the action working, not a new incident.
 */
public final class ClusterSupervisor {

    /** How patient the supervisor is. */
    public record Settings(Duration restartAfter, Duration backoff, Duration maximumBackoff, int attempts) {
        public static final Settings DEFAULTS = new Settings(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofMinutes(5), 3);

        public Settings {
            if (attempts < 1) {
                throw new IllegalArgumentException("supervision attempts must be at least 1, got " + attempts);
            }
            if (restartAfter.isNegative() || backoff.isNegative() || maximumBackoff.compareTo(backoff) < 0) {
                throw new IllegalArgumentException("supervision durations must be non-negative and maximum-backoff >= backoff");
            }
        }
    }

    /** What the supervisor can do to a cluster's machines. */
    public interface Control {
        /** Restarts every rank's daemon, rank 0 first ({@code launchctl kickstart -k}). */
        void restartInOrder(SupervisedCluster cluster) throws IOException;

        /** Reboots every machine of the cluster together, waits for them, verifies RDMA and the cabling, starts the node. */
        void rebootVerifyAndStart(SupervisedCluster cluster) throws IOException;
    }

    /** Where events go: the audit log, the alert metric, the webhook. */
    @FunctionalInterface
    public interface Events {
        void record(SupervisionEvent event);
    }

    /** One supervised cluster: its incident, the action under way, and the launchd run counts a crash loop is measured from. */
    private static final class Supervised {
        IncidentState state = IncidentState.FIRST;
        /** The action in progress (set before it is handed to the executor, cleared when it ends), or null. */
        Acting acting;
        Map<Integer, Integer> runs = new HashMap<>();
    }

    private final Settings settings;
    private final Control control;
    private final Events events;
    private final Clock clock;
    private final Executor actions;
    private final Map<String, Supervised> incidents = new HashMap<>();

    /** Actions run inside the look that orders them (tests that step through a decision one look at a time). */
    public ClusterSupervisor(Settings settings, Control control, Events events, Clock clock) {
        this(settings, control, events, clock, Runnable::run);
    }

    public ClusterSupervisor(Settings settings, Control control, Events events, Clock clock, Executor actions) {
        this.settings = Objects.requireNonNull(settings);
        this.control = Objects.requireNonNull(control);
        this.events = Objects.requireNonNull(events);
        this.clock = Objects.requireNonNull(clock);
        this.actions = Objects.requireNonNull(actions);
    }

    /** Reads one observation, acts if needed, and says where the cluster stands. */
    public ClusterStatus observe(ClusterObservation observation) {
        SupervisedCluster cluster = observation.cluster();
        Supervised incident;
        Diagnosis diagnosis;
        synchronized (this) {
            incident = incidents.computeIfAbsent(cluster.name(), name -> new Supervised());
            diagnosis = Diagnoser.diagnose(observation, incident.runs);
            if (incident.acting != null) {
                return status(observation, diagnosis, incident);
            }
            if (diagnosis instanceof Diagnosis.Serving || incident.runs.isEmpty()) {
                // The run counts a crash loop is measured from: those of the last serving look (or the first look).
                incident.runs = new HashMap<>();
                for (RankObservation rank : observation.ranks()) {
                    rank.runs().ifPresent(runs -> incident.runs.put(rank.rank(), runs));
                }
            }
        }
        Instant now = clock.instant();
        Runnable action = null;
        synchronized (this) {
            SupervisionDecision decision = SupervisionDecision.decide(incident.state, diagnosis, cluster, settings, now);
            // The new state is in place before the action is handed over: the next look never orders it again.
            incident.state = decision.next();
            decision.events().forEach(event -> emit(cluster, event.kind(), event.detail()));
            action = switch (decision.order()) {
                case FORGET -> {
                    incidents.remove(cluster.name());
                    yield null;
                }
                case NONE -> null;
                case RESTART_IN_ORDER -> () -> restart(cluster);
                case REBOOT_VERIFY_AND_START -> () -> reboot(cluster, incident);
            };
            if (action != null) {
                incident.acting = new Acting(decision.what(), now);
            }
        }
        if (action != null) {
            Runnable ordered = action;
            try {
                actions.execute(() -> {
                    try {
                        ordered.run();
                    } finally {
                        synchronized (this) {
                            incident.acting = null;
                        }
                    }
                });
            } catch (RejectedExecutionException e) {
                // The service is stopping: the action is not run, and the next holder of the lease decides afresh.
                synchronized (this) {
                    incident.acting = null;
                }
            }
        }
        synchronized (this) {
            return status(observation, diagnosis, incident);
        }
    }

    /** What the supervisor is doing to a cluster, and since when. */
    public record Acting(String what, Instant since) {
    }

    private ClusterStatus status(ClusterObservation observation, Diagnosis diagnosis, Supervised incident) {
        return new ClusterStatus(observation, diagnosis, incident.state.restarts(), Optional.ofNullable(incident.state.alert()),
                Optional.ofNullable(incident.state.servingSince()), Optional.ofNullable(incident.acting));
    }

    /** An operator restarted the cluster by hand: the supervisor starts counting afresh and the alert closes. */
    public synchronized void operatorRestarted(String cluster) {
        incidents.remove(cluster);
    }

    /** The open alert of a cluster, if any. */
    public synchronized Optional<String> alert(String cluster) {
        Supervised incident = incidents.get(cluster);
        return incident == null ? Optional.empty() : Optional.ofNullable(incident.state.alert());
    }

    /** Forgets a cluster this instance no longer supervises (lease lost, cluster removed). */
    public synchronized void forget(String cluster) {
        incidents.remove(cluster);
    }

    private void restart(SupervisedCluster cluster) {
        try {
            control.restartInOrder(cluster);
        } catch (IOException | RuntimeException e) {
            emit(cluster, SupervisionEvent.Kind.RESTART_FAILED, "the ordered restart failed: " + e.getMessage());
        }
    }

    private void reboot(SupervisedCluster cluster, Supervised incident) {
        try {
            control.rebootVerifyAndStart(cluster);
            synchronized (this) {
                incident.state = incident.state.rebooted(clock.instant());
            }
            emit(cluster, SupervisionEvent.Kind.RDMA_REBOOT_DONE, "every machine rebooted, RDMA and cabling verified, node started");
        } catch (IOException | RuntimeException e) {
            String alert = "the coordinated reboot did not recover RDMA: " + e.getMessage()
                    + "; check the Thunderbolt cables and `ibv_devinfo` on each machine";
            synchronized (this) {
                incident.state = incident.state.rebootFailed(alert);
            }
            emit(cluster, SupervisionEvent.Kind.RDMA_REBOOT_FAILED, alert);
        }
    }

    private void emit(SupervisedCluster cluster, SupervisionEvent.Kind kind, String detail) {
        events.record(new SupervisionEvent(clock.instant(), cluster.name(), kind, detail));
    }
}
