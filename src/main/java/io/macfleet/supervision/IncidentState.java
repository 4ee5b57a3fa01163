package io.macfleet.supervision;

import java.time.Instant;

/**
 * What the supervisor remembers of one cluster's current incident (immutable: each look's decision makes a new one).
 *
 * @param unhealthySince when the cluster stopped serving, null while it serves
 * @param restarts ordered restarts of the whole cluster since it last served
 * @param nextAttempt the earliest time of the next ordered restart (the back-off)
 * @param alert the open alert, null when none
 * @param reportedSkew the skew already alerted about (one alert per skew)
 * @param rdmaHandled the RDMA failure of this incident was acted on (reboot ordered or recommended): once per incident
 * @param rebootedAt when the coordinated reboot finished, null when none did
 * @param servingSince since when the cluster serves, null when it does not
 */
record IncidentState(ClusterPhase phase, Instant unhealthySince, int restarts, Instant nextAttempt, String alert, String reportedSkew,
                     boolean rdmaHandled, Instant rebootedAt, Instant servingSince) {

    /** A cluster seen for the first time, or after an operator's restart: nothing known to be wrong. */
    static final IncidentState FIRST = new IncidentState(ClusterPhase.WATCHING, null, 0, Instant.EPOCH, null, null, false, null, null);

    /** The phase these fields amount to, when no action is ordered in the same decision. */
    static ClusterPhase phaseOf(boolean serving, int restarts, String alert, boolean rdmaHandled) {
        if (alert != null) {
            return ClusterPhase.ALERTED;
        }
        if (serving) {
            return ClusterPhase.WATCHING;
        }
        if (rdmaHandled) {
            return ClusterPhase.REBOOTING;
        }
        return restarts > 0 ? ClusterPhase.RESTARTING : ClusterPhase.WAITING_FOR_LAUNCHD;
    }

    /** The coordinated reboot finished and was verified. */
    IncidentState rebooted(Instant at) {
        return new IncidentState(phase.to(phase), unhealthySince, restarts, nextAttempt, alert, reportedSkew, rdmaHandled, at, servingSince);
    }

    /** The coordinated reboot failed: an alert, and no second reboot. */
    IncidentState rebootFailed(String why) {
        return new IncidentState(phase.to(ClusterPhase.ALERTED), unhealthySince, restarts, nextAttempt, why, reportedSkew, rdmaHandled, rebootedAt,
                servingSince);
    }
}
