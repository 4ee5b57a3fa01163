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
 * slow action is never repeated by the next look, only by the next back-off step.
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

    private final class Incident {
        /** The action in progress (set before it is handed to the executor, cleared when it ends), or null. */
        Acting acting;
        Instant unhealthySince;
        int restarts;
        Instant nextAttempt = Instant.EPOCH;
        String alert;
        String reportedSkew;
        boolean rdmaHandled;
        Instant rebootedAt;
        Instant servingSince;
        Map<Integer, Integer> runs = new HashMap<>();
    }

    private final Settings settings;
    private final Control control;
    private final Events events;
    private final Clock clock;
    private final Executor actions;
    private final Map<String, Incident> incidents = new HashMap<>();

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
        Incident incident;
        Diagnosis diagnosis;
        synchronized (this) {
            incident = incidents.computeIfAbsent(cluster.name(), name -> new Incident());
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
        String what = null;
        synchronized (this) {
            switch (diagnosis) {
                case Diagnosis.NotDeployed notDeployed -> incidents.remove(cluster.name());
                case Diagnosis.Serving serving -> {
                    if (incident.unhealthySince != null || incident.alert != null || incident.restarts > 0) {
                        emit(cluster, SupervisionEvent.Kind.RECOVERED, "serving again after "
                                + seconds(Duration.between(incident.unhealthySince == null ? now : incident.unhealthySince, now))
                                + " and " + incident.restarts + " ordered restart(s)");
                    }
                    if (incident.servingSince == null) {
                        incident.servingSince = now;
                    }
                    incident.unhealthySince = null;
                    incident.restarts = 0;
                    incident.nextAttempt = Instant.EPOCH;
                    incident.alert = null;
                    incident.reportedSkew = null;
                    incident.rdmaHandled = false;
                    incident.rebootedAt = null;
                }
                case Diagnosis.Skew skew -> {
                    incident.servingSince = null;
                    markUnhealthy(incident, now);
                    if (!skew.explain().equals(incident.reportedSkew)) {
                        incident.reportedSkew = skew.explain();
                        incident.alert = "refusing to form: " + skew.explain();
                        emit(cluster, SupervisionEvent.Kind.SKEW_REFUSED, skew.explain());
                    }
                }
                case Diagnosis.RdmaFailure rdma -> {
                    incident.servingSince = null;
                    markUnhealthy(incident, now);
                    if (incident.rdmaHandled && incident.rebootedAt != null && incident.alert == null
                            && Duration.between(incident.rebootedAt, now).compareTo(settings.restartAfter()) >= 0) {
                        // Rebooted and verified, and RDMA failed again before the cluster served (after the node had
                        // restartAfter to start: until its start line, its log still ends with the old errors): a reboot
                        // does not fix this one (a cable, a port, a macOS mismatch); never reboot in a loop.
                        incident.alert = "RDMA failed again after the coordinated reboot: " + rdma.explain()
                                + "; check the Thunderbolt cables and that every machine runs the same macOS";
                        emit(cluster, SupervisionEvent.Kind.RDMA_REBOOT_FAILED, incident.alert);
                    }
                    if (!incident.rdmaHandled) {
                        incident.rdmaHandled = true;
                        if (cluster.policy().rebootOnRdmaFailure()) {
                            emit(cluster, SupervisionEvent.Kind.RDMA_REBOOT_ORDERED, "coordinated reboot of "
                                    + cluster.ranks().stream().map(SupervisedCluster.Rank::machine).toList() + ": " + rdma.explain());
                            action = () -> reboot(cluster, incident);
                            what = "coordinated reboot";
                        } else {
                            incident.alert = recommendation(cluster, rdma);
                            emit(cluster, SupervisionEvent.Kind.RDMA_REBOOT_RECOMMENDED, incident.alert);
                        }
                    }
                }
                case Diagnosis.RanksDown down -> {
                    incident.servingSince = null;
                    markUnhealthy(incident, now);
                    boolean patient = !down.crashLooping() && Duration.between(incident.unhealthySince, now).compareTo(settings.restartAfter()) < 0;
                    if (incident.alert == null && !patient && !now.isBefore(incident.nextAttempt)) {
                        if (incident.restarts >= settings.attempts()) {
                            incident.alert = "gave up after " + incident.restarts + " restart(s) of the whole cluster: " + down.explain();
                            emit(cluster, SupervisionEvent.Kind.GAVE_UP, incident.alert);
                        } else {
                            incident.restarts++;
                            Duration wait = backoff(incident.restarts);
                            incident.nextAttempt = now.plus(wait);
                            emit(cluster, SupervisionEvent.Kind.RESTART_ORDERED, "restart " + incident.restarts + " of "
                                    + settings.attempts() + " (ranks 0.." + (cluster.ranks().size() - 1) + " in order; next look in "
                                    + seconds(wait) + "): " + down.explain());
                            action = () -> restart(cluster);
                            what = "ordered restart " + incident.restarts;
                        }
                    }
                }
            }
            if (action != null) {
                incident.acting = new Acting(what, now);
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

    private ClusterStatus status(ClusterObservation observation, Diagnosis diagnosis, Incident incident) {
        return new ClusterStatus(observation, diagnosis, incident.restarts, Optional.ofNullable(incident.alert),
                Optional.ofNullable(incident.servingSince), Optional.ofNullable(incident.acting));
    }

    /** An operator restarted the cluster by hand: the supervisor starts counting afresh and the alert closes. */
    public synchronized void operatorRestarted(String cluster) {
        incidents.remove(cluster);
    }

    /** The open alert of a cluster, if any. */
    public synchronized Optional<String> alert(String cluster) {
        Incident incident = incidents.get(cluster);
        return incident == null ? Optional.empty() : Optional.ofNullable(incident.alert);
    }

    /** Forgets a cluster this instance no longer supervises (lease lost, cluster removed). */
    public synchronized void forget(String cluster) {
        incidents.remove(cluster);
    }

    private void markUnhealthy(Incident incident, Instant now) {
        if (incident.unhealthySince == null) {
            incident.unhealthySince = now;
        }
    }

    private Duration backoff(int restarts) {
        Duration wait = settings.backoff();
        for (int step = 1; step < restarts && wait.compareTo(settings.maximumBackoff()) < 0; step++) {
            wait = wait.multipliedBy(2);
        }
        return wait.compareTo(settings.maximumBackoff()) > 0 ? settings.maximumBackoff() : wait;
    }

    private void restart(SupervisedCluster cluster) {
        try {
            control.restartInOrder(cluster);
        } catch (IOException | RuntimeException e) {
            emit(cluster, SupervisionEvent.Kind.RESTART_FAILED, "the ordered restart failed: " + e.getMessage());
        }
    }

    private void reboot(SupervisedCluster cluster, Incident incident) {
        try {
            control.rebootVerifyAndStart(cluster);
            synchronized (this) {
                incident.rebootedAt = clock.instant();
            }
            emit(cluster, SupervisionEvent.Kind.RDMA_REBOOT_DONE, "every machine rebooted, RDMA and cabling verified, node started");
        } catch (IOException | RuntimeException e) {
            synchronized (this) {
                incident.alert = "the coordinated reboot did not recover RDMA: " + e.getMessage()
                        + "; check the Thunderbolt cables and `ibv_devinfo` on each machine";
            }
            emit(cluster, SupervisionEvent.Kind.RDMA_REBOOT_FAILED, incident.alert);
        }
    }

    private static String recommendation(SupervisedCluster cluster, Diagnosis.RdmaFailure rdma) {
        return rdma.explain() + ". Recommended: reboot every machine of cluster " + cluster.name() + " together ("
                + String.join(", ", cluster.ranks().stream().map(SupervisedCluster.Rank::machine).toList())
                + "; only a full reboot clears a wedged RDMA state), then check `ibv_devinfo` and the cabling;"
                + " or set supervision.rdmaFailure: reboot on the cluster in the inventory to let macfleet do it";
    }

    private void emit(SupervisedCluster cluster, SupervisionEvent.Kind kind, String detail) {
        events.record(new SupervisionEvent(clock.instant(), cluster.name(), kind, detail));
    }

    private static String seconds(Duration duration) {
        return String.format(java.util.Locale.ROOT, "%.1f s", duration.toMillis() / 1000.0);
    }
}
