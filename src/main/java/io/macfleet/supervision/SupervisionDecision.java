package io.macfleet.supervision;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the supervisor does about one look at a cluster: a pure function of (incident, diagnosis, time), so every timing
 * rule (launchd's grace, the restart back-off, the once-per-incident reboot) is tested with a made-up clock.
 *
 * @param next the incident after this look (stored before the action runs, so a slow action is never ordered twice)
 * @param events what to record, in order
 * @param order the action to run, if any
 * @param what how the action is shown while it runs, null without one
 */
record SupervisionDecision(IncidentState next, List<Event> events, Order order, String what) {

    /** An event before it gets its time. */
    record Event(SupervisionEvent.Kind kind, String detail) {
    }

    enum Order {
        NONE, RESTART_IN_ORDER, REBOOT_VERIFY_AND_START,
        /** The cluster has no node deployed: nothing to supervise, its incident is forgotten. */
        FORGET
    }

    static SupervisionDecision decide(IncidentState state, Diagnosis diagnosis, SupervisedCluster cluster, ClusterSupervisor.Settings settings,
                                      Instant now) {
        List<Event> events = new ArrayList<>();
        Order order = Order.NONE;
        String what = null;
        Instant unhealthySince = state.unhealthySince();
        int restarts = state.restarts();
        Instant nextAttempt = state.nextAttempt();
        String alert = state.alert();
        String reportedSkew = state.reportedSkew();
        boolean rdmaHandled = state.rdmaHandled();
        Instant rebootedAt = state.rebootedAt();
        Instant servingSince = state.servingSince();
        if (!(diagnosis instanceof Diagnosis.Serving) && !(diagnosis instanceof Diagnosis.NotDeployed)) {
            servingSince = null;
            unhealthySince = unhealthySince == null ? now : unhealthySince;
        }
        switch (diagnosis) {
            case Diagnosis.NotDeployed notDeployed -> {
                return new SupervisionDecision(state, List.of(), Order.FORGET, null);
            }
            case Diagnosis.Serving serving -> {
                if (unhealthySince != null || alert != null || restarts > 0) {
                    events.add(new Event(SupervisionEvent.Kind.RECOVERED, "serving again after "
                            + seconds(Duration.between(unhealthySince == null ? now : unhealthySince, now)) + " and " + restarts + " ordered restart(s)"));
                }
                servingSince = servingSince == null ? now : servingSince;
                unhealthySince = null;
                restarts = 0;
                nextAttempt = Instant.EPOCH;
                alert = null;
                reportedSkew = null;
                rdmaHandled = false;
                rebootedAt = null;
            }
            case Diagnosis.Skew skew -> {
                if (!skew.explain().equals(reportedSkew)) {
                    reportedSkew = skew.explain();
                    alert = "refusing to form: " + skew.explain();
                    events.add(new Event(SupervisionEvent.Kind.SKEW_REFUSED, skew.explain()));
                }
            }
            case Diagnosis.RdmaFailure rdma -> {
                if (rdmaHandled && rebootedAt != null && alert == null && Duration.between(rebootedAt, now).compareTo(settings.restartAfter()) >= 0) {
                    // Rebooted and verified, and RDMA failed again before the cluster served (after the node had
                    // restartAfter to start: until its start line, its log still ends with the old errors): a reboot
                    // does not fix this one (a cable, a port, a macOS mismatch); never reboot in a loop.
                    alert = "RDMA failed again after the coordinated reboot: " + rdma.explain()
                            + "; check the Thunderbolt cables and that every machine runs the same macOS";
                    events.add(new Event(SupervisionEvent.Kind.RDMA_REBOOT_FAILED, alert));
                }
                if (!rdmaHandled) {
                    rdmaHandled = true;
                    if (cluster.policy().rebootOnRdmaFailure()) {
                        events.add(new Event(SupervisionEvent.Kind.RDMA_REBOOT_ORDERED, "coordinated reboot of "
                                + cluster.ranks().stream().map(SupervisedCluster.Rank::machine).toList() + ": " + rdma.explain()));
                        order = Order.REBOOT_VERIFY_AND_START;
                        what = "coordinated reboot";
                    } else {
                        alert = recommendation(cluster, rdma);
                        events.add(new Event(SupervisionEvent.Kind.RDMA_REBOOT_RECOMMENDED, alert));
                    }
                }
            }
            case Diagnosis.RanksDown down -> {
                boolean patient = !down.crashLooping() && Duration.between(unhealthySince, now).compareTo(settings.restartAfter()) < 0;
                if (alert == null && !patient && !now.isBefore(nextAttempt)) {
                    if (restarts >= settings.attempts()) {
                        alert = "gave up after " + restarts + " restart(s) of the whole cluster: " + down.explain();
                        events.add(new Event(SupervisionEvent.Kind.GAVE_UP, alert));
                    } else {
                        restarts++;
                        Duration wait = backoff(settings, restarts);
                        nextAttempt = now.plus(wait);
                        events.add(new Event(SupervisionEvent.Kind.RESTART_ORDERED, "restart " + restarts + " of " + settings.attempts()
                                + " (ranks 0.." + (cluster.ranks().size() - 1) + " in order; next look in " + seconds(wait) + "): " + down.explain()));
                        order = Order.RESTART_IN_ORDER;
                        what = "ordered restart " + restarts;
                    }
                }
            }
        }
        ClusterPhase phase = switch (order) {
            case RESTART_IN_ORDER -> ClusterPhase.RESTARTING;
            case REBOOT_VERIFY_AND_START -> ClusterPhase.REBOOTING;
            default -> IncidentState.phaseOf(diagnosis instanceof Diagnosis.Serving, restarts, alert, rdmaHandled);
        };
        IncidentState next = new IncidentState(state.phase().to(phase), unhealthySince, restarts, nextAttempt, alert, reportedSkew, rdmaHandled,
                rebootedAt, servingSince);
        return new SupervisionDecision(next, List.copyOf(events), order, what);
    }

    /** The wait after the n-th ordered restart: {@code backoff}, doubling, at most {@code maximumBackoff}. */
    static Duration backoff(ClusterSupervisor.Settings settings, int restarts) {
        Duration wait = settings.backoff();
        for (int step = 1; step < restarts && wait.compareTo(settings.maximumBackoff()) < 0; step++) {
            wait = wait.multipliedBy(2);
        }
        return wait.compareTo(settings.maximumBackoff()) > 0 ? settings.maximumBackoff() : wait;
    }

    private static String recommendation(SupervisedCluster cluster, Diagnosis.RdmaFailure rdma) {
        return rdma.explain() + ". Recommended: reboot every machine of cluster " + cluster.name() + " together ("
                + String.join(", ", cluster.ranks().stream().map(SupervisedCluster.Rank::machine).toList())
                + "; only a full reboot clears a wedged RDMA state), then check `ibv_devinfo` and the cabling;"
                + " or set supervision.rdmaFailure: reboot on the cluster in the inventory to let macfleet do it";
    }

    private static String seconds(Duration duration) {
        return String.format(Locale.ROOT, "%.1f s", duration.toMillis() / 1000.0);
    }
}
