package io.macfleet.supervision;

import java.time.Instant;
import java.util.Optional;

/**
 * The supervisor's view of one cluster after its latest look: for the console, the CLI and /q/metrics.
 *
 * @param restarts ordered restarts of the whole cluster since it last served (reset when it serves again)
 * @param alert the sentence of the open alert, if the supervisor stopped acting and needs an operator
 * @param acting the action the supervisor has under way on the cluster (a restart, a coordinated reboot), if any
 */
public record ClusterStatus(ClusterObservation observation, Diagnosis diagnosis, int restarts, Optional<String> alert,
                            Optional<Instant> servingSince, Optional<ClusterSupervisor.Acting> acting) {

    public ClusterStatus {
        // A status stored by a version without the field reads back without it: nothing under way.
        acting = acting == null ? Optional.empty() : acting;
    }

    public String name() {
        return observation.cluster().name();
    }

    public boolean serving() {
        return diagnosis instanceof Diagnosis.Serving;
    }
}
