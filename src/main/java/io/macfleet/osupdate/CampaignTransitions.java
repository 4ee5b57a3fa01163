package io.macfleet.osupdate;

import static io.macfleet.osupdate.MachinePhase.BLOCKED;
import static io.macfleet.osupdate.MachinePhase.CHECKED;
import static io.macfleet.osupdate.MachinePhase.DOWNLOADING;
import static io.macfleet.osupdate.MachinePhase.INSTALLING;
import static io.macfleet.osupdate.MachinePhase.PREPARED;
import static io.macfleet.osupdate.MachinePhase.RESTARTING;
import static io.macfleet.osupdate.MachinePhase.WAITING;

/**
 * Every transition a campaign, a cluster and a machine may make, in one place. {@link CampaignStateMachine} checks
 * each against these tables before it stores it.
 */
final class CampaignTransitions {
    private CampaignTransitions() {
    }

    /** A campaign runs until it succeeds or fails; an operator pauses it or resumes a paused or failed one. */
    static final StateTable<CampaignStatus> CAMPAIGN = StateTable.of(CampaignStatus.class, "campaign status")
            .allow(CampaignStatus.RUNNING, CampaignStatus.PAUSED, CampaignStatus.SUCCEEDED, CampaignStatus.FAILED)
            .allow(CampaignStatus.PAUSED, CampaignStatus.RUNNING)
            .allow(CampaignStatus.FAILED, CampaignStatus.RUNNING)
            .build();

    /**
     * A cluster goes through its steps in order and may fail at any step before DONE; a resume sends a failed cluster
     * back to {@link #resumeStep the step it is taken up at}.
     */
    static final StateTable<ClusterStep> CLUSTER = StateTable.of(ClusterStep.class, "cluster step")
            .allow(ClusterStep.PENDING, ClusterStep.PREFLIGHT, ClusterStep.FAILED)
            .allow(ClusterStep.PREFLIGHT, ClusterStep.DRAINING, ClusterStep.FAILED)
            .allow(ClusterStep.DRAINING, ClusterStep.UPDATING, ClusterStep.FAILED)
            .allow(ClusterStep.UPDATING, ClusterStep.VERIFYING, ClusterStep.FAILED)
            .allow(ClusterStep.VERIFYING, ClusterStep.UNDRAINING, ClusterStep.FAILED)
            .allow(ClusterStep.UNDRAINING, ClusterStep.DONE, ClusterStep.FAILED)
            .allow(ClusterStep.FAILED, ClusterStep.PENDING, ClusterStep.DRAINING, ClusterStep.UPDATING, ClusterStep.UNDRAINING)
            .build();

    /**
     * A machine is checked by preflight, then follows what the Mac reports (macOS may skip phases or report an earlier
     * one again) until done or failed. Any machine may fail (drain, update, verify); a failed one is sent the update
     * again on resume (WAITING); a resume from preflight sets every machine back to PENDING.
     */
    static final StateTable<MachinePhase> MACHINE = StateTable.of(MachinePhase.class, "machine phase")
            .allow(MachinePhase.PENDING, CHECKED, BLOCKED, MachinePhase.DONE)
            .allow(CHECKED, BLOCKED, MachinePhase.DONE, WAITING, DOWNLOADING, PREPARED, INSTALLING, RESTARTING)
            .allow(BLOCKED, CHECKED, MachinePhase.DONE)
            .allow(WAITING, DOWNLOADING, PREPARED, INSTALLING, RESTARTING, MachinePhase.DONE)
            .allow(DOWNLOADING, WAITING, PREPARED, INSTALLING, RESTARTING, MachinePhase.DONE)
            .allow(PREPARED, WAITING, DOWNLOADING, INSTALLING, RESTARTING, MachinePhase.DONE)
            .allow(INSTALLING, WAITING, DOWNLOADING, PREPARED, RESTARTING, MachinePhase.DONE)
            .allow(RESTARTING, WAITING, DOWNLOADING, PREPARED, INSTALLING, MachinePhase.DONE)
            .allow(MachinePhase.DONE, CHECKED, BLOCKED)
            .allow(MachinePhase.FAILED, WAITING)
            .fromAny(MachinePhase.FAILED)
            .fromAny(MachinePhase.PENDING)
            .repeatAllowed()
            .build();

    /** SENDING is stored before the start is sent and SENT after; a resume that sends again goes back to NOT_SENT. */
    static final StateTable<StartState> START = StateTable.of(StartState.class, "start state")
            .allow(StartState.NOT_SENT, StartState.SENDING)
            .allow(StartState.SENDING, StartState.SENT)
            .fromAny(StartState.NOT_SENT)
            .repeatAllowed()
            .build();

    /** Where a resume takes up a cluster that failed at {@code failedAt}: a preflight from the start, an update with its verify. */
    static ClusterStep resumeStep(ClusterStep failedAt) {
        return switch (failedAt) {
            case PREFLIGHT, PENDING -> ClusterStep.PENDING;
            case UPDATING, VERIFYING -> ClusterStep.UPDATING;
            default -> failedAt;
        };
    }
}
