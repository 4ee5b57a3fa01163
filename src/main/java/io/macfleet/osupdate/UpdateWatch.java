package io.macfleet.osupdate;

import io.macfleet.audit.AuditEvent;
import io.macfleet.inventory.Machine;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.osupdate.WaveExecutor.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The UPDATING step of one cluster: the update method's start sent to every node (each send stored before and after,
 * so a resume sends nothing twice), then every node watched until done or failed, each phase against its own deadline
 * slot on the engine's clock.
 */
final class UpdateWatch {
    private final CampaignContext context;

    UpdateWatch(CampaignContext context) {
        this.context = context;
    }

    Outcome update(long id, String cluster, Map<String, Machine> machines, OsUpdateTarget target, UpdateMethod method, String actor, String owner) {
        CampaignStore store = context.store();
        CampaignStateMachine states = context.states();
        store.restartPhaseClocks(id, cluster, context.clock().instant());
        for (CampaignStore.MachineRow row : store.machines(id, cluster)) {
            if (!row.phase().active() || row.startState() == StartState.SENT) {
                continue;
            }
            Machine machine = machines.get(row.machine());
            states.start(id, row.machine(), StartState.SENDING);
            context.boundary().reached(id, "sending " + row.machine());
            StartResult started = method.start(machine, target);
            for (StartResult.Action action : started.actions()) {
                context.audit().record(new AuditEvent(context.clock().instant(), actor, row.machine(), "os-update.send", "campaign " + id + ": " + action.kind()
                        + " " + action.subject() + (action.changed() ? " (changed)" : " (unchanged: already there)"), AuditEvent.Outcome.SUCCESS));
            }
            states.sent(id, row.machine(), started.actions());
            if (started.failure().isPresent()) {
                states.failMachine(id, cluster, row.machine(), "could not start the update: " + started.failure().get(), actor);
            } else {
                states.machine(id, row.machine(), MachinePhase.WAITING, "update sent via " + method.name());
            }
            context.boundary().reached(id, "sent " + row.machine());
        }
        while (true) {
            if (context.paused(id)) {
                return Outcome.PAUSED;
            }
            store.heartbeat(id, owner, context.clock().instant());
            List<CampaignStore.MachineRow> active = store.machines(id, cluster).stream().filter(row -> row.phase().active()).toList();
            if (active.isEmpty()) {
                break;
            }
            for (CampaignStore.MachineRow row : active) {
                watch(id, cluster, machines.get(row.machine()), row, target, method, actor);
            }
            context.pause().pause(context.options().pollInterval());
        }
        List<String> failed = store.machines(id, cluster).stream().filter(row -> row.phase() == MachinePhase.FAILED).map(CampaignStore.MachineRow::machine)
                .toList();
        if (!failed.isEmpty()) {
            states.failCluster(id, cluster, ClusterStep.UPDATING, "the update failed on " + String.join(", ", failed) + "; the other machines were not rolled"
                    + " back (macOS cannot be) and the cluster stays down for maintenance. Fix each failed machine as shown, then `macfleet os-update resume "
                    + id + "`");
            context.boundary().reached(id, "update-failed " + cluster);
            return Outcome.FAILED;
        }
        states.cluster(id, cluster, ClusterStep.VERIFYING);
        context.boundary().reached(id, "verifying " + cluster);
        return Outcome.DONE;
    }

    /** One look at one machine: its reported phase stored, and the machine failed when it stayed in a phase past its slot. */
    private void watch(long id, String cluster, Machine machine, CampaignStore.MachineRow row, OsUpdateTarget target, UpdateMethod method, String actor) {
        CampaignStateMachine states = context.states();
        UpdateProgress progress;
        try {
            progress = method.progress(machine, target);
        } catch (RuntimeException e) {
            progress = UpdateProgress.unknown("progress could not be read: " + e.getMessage());
        }
        MachinePhase phase = MachinePhase.reported(progress.phase(), row.phase());
        switch (progress.phase()) {
            case FAILED -> {
                states.failMachine(id, cluster, row.machine(), progress.failure().orElse(progress.detail()), actor);
                return;
            }
            case DONE -> {
                states.machine(id, row.machine(), MachinePhase.DONE, progress.osVersion(), progress.buildVersion(), progress.detail(), null);
                return;
            }
            case UNKNOWN -> states.machine(id, row.machine(), row.phase(), progress.detail());
            default -> states.machine(id, row.machine(), phase, progress.osVersion(), progress.buildVersion(), progress.detail(), null);
        }
        if (phase == row.phase() || (phase == MachinePhase.WAITING && row.phase() == MachinePhase.CHECKED)) {
            Duration slot = context.options().deadlines().of(phase);
            if (row.phaseSince() != null && context.clock().instant().isAfter(row.phaseSince().plus(slot))) {
                boolean reachable = context.reachability().reachable(machine, actor);
                String what = phase == MachinePhase.WAITING
                        ? "did not start the update within " + CampaignContext.human(slot) + " of it being sent (last seen: " + progress.detail() + ")"
                        : "stayed '" + phase.wire() + "' longer than " + CampaignContext.human(slot) + " (last seen: " + progress.detail() + ")";
                String why = reachable ? "" : "; it does not answer over SSH: it is probably off or asleep";
                states.failMachine(id, cluster, row.machine(), what + why, actor, reachable ? null
                        : "power " + row.machine() + " on (a Mac that missed its install time installs about an hour after it starts again), then"
                        + " `macfleet os-update resume " + id + "`");
            }
        }
    }
}
