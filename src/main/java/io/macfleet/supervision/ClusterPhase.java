package io.macfleet.supervision;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Where the supervisor stands with one cluster, and which phase may follow which: the table below is the only place
 * that says so. The phase is a summary of the incident's fields ({@link IncidentState#phaseOf}); a move the table
 * does not allow is a bug in the decisions and fails loudly instead of leaving a cluster in a state nobody planned.
 */
enum ClusterPhase {
    /** Serving, or nothing wrong seen yet: nothing to do. */
    WATCHING,
    /** A rank is down: launchd's KeepAlive and the node's own re-forming get {@code restartAfter} to fix it. */
    WAITING_FOR_LAUNCHD,
    /** The whole cluster was restarted in order at least once in this incident; the next attempt waits for its back-off. */
    RESTARTING,
    /** RDMA failed: a coordinated reboot is ordered or done in this incident (never a second one). */
    REBOOTING,
    /** An alert is open (gave up, skew, RDMA recommendation or a failed reboot): only serving again or an operator closes it. */
    ALERTED;

    /** Thrown for a move the table does not allow; names both phases. */
    static final class IllegalTransitionException extends IllegalStateException {
        IllegalTransitionException(ClusterPhase from, ClusterPhase to) {
            super("cluster supervision cannot go from " + from + " to " + to);
        }
    }

    private static final Map<ClusterPhase, Set<ClusterPhase>> ALLOWED = Map.of(
            WATCHING, EnumSet.of(WATCHING, WAITING_FOR_LAUNCHD, RESTARTING, REBOOTING, ALERTED),
            WAITING_FOR_LAUNCHD, EnumSet.of(WATCHING, WAITING_FOR_LAUNCHD, RESTARTING, REBOOTING, ALERTED),
            // An ordered restart counts until the cluster serves again, so it never falls back to waiting for launchd.
            RESTARTING, EnumSet.of(WATCHING, RESTARTING, REBOOTING, ALERTED),
            // A restart may still be ordered after the reboot (the node did not come back), never a second reboot.
            REBOOTING, EnumSet.of(WATCHING, RESTARTING, REBOOTING, ALERTED),
            // An open alert stops restarts; only RDMA's once-per-incident reboot may still be ordered.
            ALERTED, EnumSet.of(WATCHING, REBOOTING, ALERTED));

    boolean mayBecome(ClusterPhase next) {
        return ALLOWED.get(this).contains(next);
    }

    /** The phase {@code next}, or the exception naming both when the table does not allow it. */
    ClusterPhase to(ClusterPhase next) {
        if (!mayBecome(next)) {
            throw new IllegalTransitionException(this, next);
        }
        return next;
    }
}
