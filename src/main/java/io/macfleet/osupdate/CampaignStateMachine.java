package io.macfleet.osupdate;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.mdm.OsUpdateTarget;
import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The only way the engine changes a campaign's, cluster's or machine's state: each transition is checked against
 * {@link CampaignTransitions} (an illegal one throws {@link IllegalTransitionException} and stores nothing) and stored
 * before the caller acts on it, so a process killed anywhere leaves a state a resume continues from.
 */
final class CampaignStateMachine {
    private final CampaignStore store;
    private final AuditLog audit;
    private final Clock clock;

    CampaignStateMachine(CampaignStore store, AuditLog audit, Clock clock) {
        this.store = store;
        this.audit = audit;
        this.clock = clock;
    }

    /** Moves the campaign only when it is {@code from} now (another process may have paused it); false when it was not. */
    boolean campaign(long id, CampaignStatus from, CampaignStatus to) {
        CampaignTransitions.CAMPAIGN.check(from, to);
        return store.changeStatus(id, from, to, clock.instant());
    }

    void cluster(long id, String cluster, ClusterStep to) {
        CampaignTransitions.CLUSTER.check(step(id, cluster), to);
        store.setClusterStep(id, cluster, to, clock.instant());
    }

    /** The cluster fails at {@code at}, which a resume goes back to (see {@link CampaignTransitions#resumeStep}). */
    void failCluster(long id, String cluster, ClusterStep at, String failure) {
        CampaignTransitions.CLUSTER.check(step(id, cluster), ClusterStep.FAILED);
        store.failCluster(id, cluster, at, failure, clock.instant());
    }

    void machine(long id, String machine, MachinePhase to, Optional<String> osVersion, Optional<String> buildVersion, String detail, String fix) {
        CampaignTransitions.MACHINE.check(row(id, machine).phase(), to);
        store.setMachine(id, machine, to, osVersion, buildVersion, detail, fix, clock.instant());
    }

    void machine(long id, String machine, MachinePhase to, String detail) {
        machine(id, machine, to, Optional.empty(), Optional.empty(), detail, null);
    }

    void failMachine(long id, String cluster, String machine, String reason, String actor) {
        failMachine(id, cluster, machine, reason, actor, null);
    }

    /** The machine fails with its reason and what a person must do (guessed from the reason when {@code fix} is null); audited. */
    void failMachine(long id, String cluster, String machine, String reason, String actor, String fix) {
        machine(id, machine, MachinePhase.FAILED, Optional.empty(), Optional.empty(), reason, fix != null ? fix : fixFor(id, cluster, machine, reason));
        audit.record(new AuditEvent(clock.instant(), actor, machine, "os-update.machine", "campaign " + id + ": failed: " + reason, AuditEvent.Outcome.FAILURE));
    }

    void start(long id, String machine, StartState to) {
        CampaignTransitions.START.check(row(id, machine).startState(), to);
        store.setStartState(id, machine, to, clock.instant());
    }

    /** What the method's start sent, and the machine SENT, in one transaction. */
    void sent(long id, String machine, List<StartResult.Action> actions) {
        CampaignTransitions.START.check(row(id, machine).startState(), StartState.SENT);
        store.recordSent(id, machine, actions, clock.instant());
    }

    /**
     * Makes a campaign runnable again: a paused one running, a failed one {@link #reopen reopened}; a running one is left
     * to {@code run}, which takes it over once its process's lease is free or stale.
     *
     * @throws OsUpdateCampaigns.UnknownCampaignException when there is no such campaign
     * @throws OsUpdateCampaigns.CampaignConflictException when it already succeeded
     */
    void prepareResume(long id, String actor) {
        CampaignStore.Campaign campaign = store.campaign(id).orElseThrow(() -> new OsUpdateCampaigns.UnknownCampaignException(id));
        switch (campaign.status()) {
            case SUCCEEDED -> throw new OsUpdateCampaigns.CampaignConflictException("campaign " + id + " already succeeded: nothing to resume");
            case PAUSED -> campaign(id, CampaignStatus.PAUSED, CampaignStatus.RUNNING);
            case FAILED -> reopen(campaign);
            case RUNNING -> {
                // A campaign whose process died: run takes it over once the lease is free or stale.
            }
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.resume", "campaign " + id + " resumed (was " + campaign.status().wire() + ")",
                AuditEvent.Outcome.SUCCESS));
    }

    /**
     * Takes up a failed campaign again: each failed cluster goes back to its {@link CampaignTransitions#resumeStep}; from
     * preflight every machine is pending again; machines that failed while updating are sent the exact target again,
     * with a new install time (a Mac keeps its failure for the same revision; a new install time is a new revision).
     */
    void reopen(CampaignStore.Campaign campaign) {
        long id = campaign.id();
        boolean resend = false;
        for (Map.Entry<String, ClusterStep> cluster : store.clusterSteps(id).entrySet()) {
            if (cluster.getValue() != ClusterStep.FAILED) {
                continue;
            }
            ClusterStep back = CampaignTransitions.resumeStep(store.failedStep(id, cluster.getKey()).orElse(ClusterStep.PREFLIGHT));
            for (CampaignStore.MachineRow machine : store.machines(id, cluster.getKey())) {
                if (back == ClusterStep.PENDING) {
                    machine(id, machine.machine(), MachinePhase.PENDING, null);
                } else if (back == ClusterStep.UPDATING && machine.phase() == MachinePhase.FAILED) {
                    machine(id, machine.machine(), MachinePhase.WAITING, "sent again on resume");
                    start(id, machine.machine(), StartState.NOT_SENT);
                    resend = true;
                }
            }
            cluster(id, cluster.getKey(), back);
        }
        if (resend) {
            OsUpdateTarget again = new OsUpdateTarget(campaign.target().osVersion(), campaign.target().buildVersion(),
                    LocalDateTime.now(clock.withZone(ZoneId.systemDefault())));
            store.setInstallBy(id, again, clock.instant());
        }
        campaign(id, CampaignStatus.FAILED, CampaignStatus.RUNNING);
    }

    static String fixFor(long id, String cluster, String machine, String reason) {
        String resume = "then `macfleet os-update resume " + id + "`";
        String lower = reason.toLowerCase(Locale.ROOT);
        if (lower.contains("bootstrap token")) {
            return "escrow the bootstrap token on " + machine + " (macfleet provision " + cluster + " --machine " + machine + " --playbook bootstrap-token), " + resume;
        }
        if (lower.contains("disk")) {
            return "free disk space on " + machine + " (df -h /), " + resume;
        }
        if (lower.contains("download")) {
            return "check that " + machine + " reaches Apple's update servers (network, proxy, content caching), " + resume;
        }
        if (lower.contains("build")) {
            return machine + " runs another build than the target: resume sends the exact target again (" + resume.substring(5)
                    + "); if Apple no longer offers that build, plan a new campaign with --build set to the build Software Update offers";
        }
        return "look at " + machine + " (Software Update's log: log show --last 1h --predicate 'process == \"softwareupdated\"'), " + resume;
    }

    private ClusterStep step(long id, String cluster) {
        ClusterStep step = store.clusterSteps(id).get(cluster);
        if (step == null) {
            throw new IllegalStateException("campaign " + id + " has no cluster " + cluster);
        }
        return step;
    }

    private CampaignStore.MachineRow row(long id, String machine) {
        return store.machine(id, machine).orElseThrow(() -> new IllegalStateException("campaign " + id + " has no machine " + machine));
    }
}
