package io.macfleet.osupdate;

import static io.macfleet.osupdate.CampaignContext.describe;

import io.macfleet.audit.AuditEvent;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.MachineFacts;
import io.macfleet.inventory.Machine;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The steps of one cluster around its update: PREFLIGHT (read-only; any problem fails the cluster before anything
 * changes), DRAINING (down for maintenance, the inference daemons stopped), VERIFYING (exact version and build over
 * SSH, RDMA still on, cabling check) and UNDRAINING (the daemons started again, back in service). Each ends by storing
 * the cluster's next step (or its failure) through the state machine; the UPDATING step is {@link UpdateWatch}.
 */
final class ClusterSteps {
    private final CampaignContext context;
    private final CampaignPlanner planner;
    private final CampaignStore store;
    private final CampaignStateMachine states;

    ClusterSteps(CampaignContext context, CampaignPlanner planner) {
        this.context = context;
        this.planner = planner;
        this.store = context.store();
        this.states = context.states();
    }

    void preflight(long id, String cluster, Map<String, Machine> machines, OsUpdateTarget target, UpdateMethod method, String actor) {
        Map<String, PreflightResult> results = planner.preflightAll(method, List.copyOf(machines.values()), target);
        List<String> blocked = new ArrayList<>();
        for (PreflightResult result : results.values()) {
            if (result.passed()) {
                states.machine(id, result.machine(), result.alreadyOnTarget(target) ? MachinePhase.DONE : MachinePhase.CHECKED, result.osVersion(),
                        result.buildVersion(), result.alreadyOnTarget(target) ? "already on " + describe(target) : "preflight passed", null);
            } else {
                blocked.add(result.machine());
                String problems = result.findings().stream().map(finding -> finding.check().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-')
                        + ": " + finding.problem()).collect(Collectors.joining("; "));
                String fixes = result.findings().stream().map(PreflightFinding::fix).collect(Collectors.joining("; "));
                states.machine(id, result.machine(), MachinePhase.BLOCKED, result.osVersion(), result.buildVersion(), problems, fixes);
                context.audit().record(new AuditEvent(context.clock().instant(), actor, result.machine(), "os-update.preflight", "campaign " + id + ": " + problems,
                        AuditEvent.Outcome.FAILURE));
            }
        }
        if (!blocked.isEmpty()) {
            states.failCluster(id, cluster, ClusterStep.PREFLIGHT, "preflight failed on " + String.join(", ", blocked)
                    + "; nothing was changed on the cluster. Fix each machine as shown, then `macfleet os-update resume " + id + "`");
            context.boundary().reached(id, "preflight-failed " + cluster);
            return;
        }
        List<String> cablingErrors = planner.cablingErrors(cluster, true);
        if (!cablingErrors.isEmpty()) {
            states.failCluster(id, cluster, ClusterStep.PREFLIGHT, "the cabling check fails before the update (" + String.join("; ", cablingErrors)
                    + "); nothing was changed. Fix it (macfleet cabling check " + cluster + "), then `macfleet os-update resume " + id + "`");
            return;
        }
        for (Machine machine : machines.values()) {
            context.facts().latest(machine.name()).ifPresent(observation -> store.setRdmaBefore(id, machine.name(), observation.facts().rdmaEnabled()));
        }
        context.audit().record(new AuditEvent(context.clock().instant(), actor, null, "os-update.preflight", "campaign " + id + ": " + cluster + " passed on "
                + String.join(", ", machines.keySet()), AuditEvent.Outcome.SUCCESS));
        states.cluster(id, cluster, ClusterStep.DRAINING);
        context.boundary().reached(id, "draining " + cluster);
    }

    void drain(CampaignStore.Campaign campaign, String cluster, Map<String, Machine> machines, String actor) {
        long id = campaign.id();
        store.enterMaintenance(cluster, id, "OS update to " + describe(campaign.target()), context.clock().instant());
        context.boundary().reached(id, "maintenance " + cluster);
        List<String> labels = serviceLabels(campaign, cluster);
        try (NodeShell shell = context.shell(actor)) {
            for (Machine machine : machines.values()) {
                try {
                    boolean anyLoaded = false;
                    for (String label : labels.reversed()) {
                        boolean loaded = shell.loaded(machine, label);
                        anyLoaded |= loaded;
                        if (loaded) {
                            store.recordServiceWasLoaded(id, machine.name(), true);
                        }
                        context.boundary().reached(id, "stopping " + machine.name());
                        shell.stop(machine, label, loaded);
                        context.audit().record(new AuditEvent(context.clock().instant(), actor, machine.name(), "os-update.drain", "campaign " + id + ": launchctl disable"
                                + (loaded ? " and bootout" : "") + " system/" + label + (loaded ? "" : " (was not loaded)"), AuditEvent.Outcome.SUCCESS));
                    }
                    if (!anyLoaded) {
                        store.recordServiceWasLoaded(id, machine.name(), false);
                    }
                } catch (SshException | IOException e) {
                    states.machine(id, machine.name(), MachinePhase.FAILED, Optional.empty(), Optional.empty(), "could not stop the inference service: " + e.getMessage(),
                            "make " + machine.name() + " reachable over SSH, then `macfleet os-update resume " + id + "`");
                    states.failCluster(id, cluster, ClusterStep.DRAINING, "draining failed on " + machine.name() + "; the cluster is down for maintenance");
                    context.audit().record(new AuditEvent(context.clock().instant(), actor, machine.name(), "os-update.drain", "campaign " + id + ": " + e.getMessage(),
                            AuditEvent.Outcome.FAILURE));
                    return;
                }
            }
        }
        states.cluster(id, cluster, ClusterStep.UPDATING);
        context.boundary().reached(id, "updating " + cluster);
    }

    void verify(long id, String cluster, Map<String, Machine> machines, OsUpdateTarget target, String actor) {
        FactsService.Gathering gathering = context.facts().gather(List.copyOf(machines.values()), context.options().ssh());
        List<String> failed = new ArrayList<>();
        Map<String, MachineFacts> observed = new LinkedHashMap<>();
        Map<String, Boolean> rdmaBefore = new java.util.HashMap<>();
        store.machines(id, cluster).forEach(row -> rdmaBefore.put(row.machine(), Boolean.TRUE.equals(row.rdmaBefore())));
        for (MachineResult<MachineFacts> result : gathering.results()) {
            if (!result.succeeded()) {
                failed.add(result.machine());
                states.failMachine(id, cluster, result.machine(), "not readable over SSH after the update: " + result.describe(), actor,
                        "make " + result.machine() + " reachable, then `macfleet os-update resume " + id + "`");
                continue;
            }
            MachineFacts fact = result.value();
            observed.put(result.machine(), fact);
            String on = fact.macosVersion() + " (" + fact.macosBuild() + ")";
            if (!fact.macosVersion().equals(target.osVersion()) || (target.buildVersion().isPresent() && !target.buildVersion().get().equals(fact.macosBuild()))) {
                failed.add(result.machine());
                states.failMachine(id, cluster, result.machine(), "sw_vers says " + on + ", not the target " + describe(target), actor);
            } else if (rdmaBefore.getOrDefault(result.machine(), false) && !fact.rdmaEnabled()) {
                failed.add(result.machine());
                states.failMachine(id, cluster, result.machine(), "RDMA is no longer enabled after the update (rdma_ctl status)", actor,
                        "enable RDMA in Recovery (macfleet provision " + cluster + " --machine " + result.machine() + " --playbook rdma-enable), then"
                                + " `macfleet os-update resume " + id + "`");
            }
        }
        if (target.buildVersion().isEmpty() && observed.values().stream().map(MachineFacts::macosBuild).distinct().count() > 1) {
            String builds = observed.entrySet().stream().map(entry -> entry.getKey() + " " + entry.getValue().macosBuild()).collect(Collectors.joining(", "));
            for (String machine : observed.keySet()) {
                if (!failed.contains(machine)) {
                    failed.add(machine);
                    states.failMachine(id, cluster, machine, "the cluster's nodes run different builds (" + builds + "); RDMA needs one build", actor,
                            "plan a campaign with --build set to one build for all nodes");
                }
            }
        }
        List<String> cablingErrors = failed.isEmpty() ? planner.cablingErrors(cluster, false) : List.of();
        if (!failed.isEmpty() || !cablingErrors.isEmpty()) {
            states.failCluster(id, cluster, ClusterStep.VERIFYING, (failed.isEmpty() ? "" : "verification failed on " + String.join(", ", failed) + ". ")
                    + (cablingErrors.isEmpty() ? "" : "The cabling check fails after the update: " + String.join("; ", cablingErrors) + ". ")
                    + "The cluster stays down for maintenance; fix it, then `macfleet os-update resume " + id + "`");
            context.audit().record(new AuditEvent(context.clock().instant(), actor, null, "os-update.verify", "campaign " + id + ": " + cluster + " failed verification",
                    AuditEvent.Outcome.FAILURE));
            context.boundary().reached(id, "verify-failed " + cluster);
            return;
        }
        for (Map.Entry<String, MachineFacts> entry : observed.entrySet()) {
            states.machine(id, entry.getKey(), MachinePhase.DONE, Optional.of(entry.getValue().macosVersion()), Optional.of(entry.getValue().macosBuild()),
                    "verified: sw_vers " + entry.getValue().macosVersion() + " (" + entry.getValue().macosBuild() + ")"
                            + (entry.getValue().rdmaEnabled() ? ", RDMA enabled" : ""), null);
        }
        context.audit().record(new AuditEvent(context.clock().instant(), actor, null, "os-update.verify", "campaign " + id + ": " + cluster + " on " + describe(target)
                + ", cabling check passed", AuditEvent.Outcome.SUCCESS));
        states.cluster(id, cluster, ClusterStep.UNDRAINING);
        context.boundary().reached(id, "undraining " + cluster);
    }

    void undrain(CampaignStore.Campaign campaign, String cluster, Map<String, Machine> machines, String actor) {
        long id = campaign.id();
        Map<String, Boolean> wasLoaded = new java.util.HashMap<>();
        store.machines(id, cluster).forEach(row -> wasLoaded.put(row.machine(), Boolean.TRUE.equals(row.serviceWasLoaded())));
        List<String> labels = serviceLabels(campaign, cluster);
        try (NodeShell shell = context.shell(actor)) {
            // Label by label in the runtime's start order (llama.cpp: every rpc-server before the head that connects to them).
            for (String label : labels) {
            for (Machine machine : machines.values()) {
                try {
                    // A runtime with several daemons has only some of them on each Mac: load those whose plist is there.
                    boolean load = wasLoaded.get(machine.name()) && (labels.size() == 1 || shell.execute(machine,
                            io.macfleet.ssh.Command.reading("test", "-f", io.macfleet.deployment.LaunchDaemon.DAEMON_DIRECTORY + label + ".plist")).succeeded());
                    shell.start(machine, label, load);
                    context.audit().record(new AuditEvent(context.clock().instant(), actor, machine.name(), "os-update.undrain", "campaign " + id + ": launchctl enable"
                            + (load ? " and bootstrap" : "") + " system/" + label, AuditEvent.Outcome.SUCCESS));
                } catch (SshException | IOException e) {
                    states.failCluster(id, cluster, ClusterStep.UNDRAINING, "could not start the inference service again on " + machine.name() + ": "
                            + e.getMessage() + "; fix it, then `macfleet os-update resume " + id + "`");
                    return;
                }
            }
            }
        }
        store.leaveMaintenance(cluster, id);
        states.cluster(id, cluster, ClusterStep.DONE);
        context.audit().record(new AuditEvent(context.clock().instant(), actor, null, "os-update.cluster", "campaign " + id + ": " + cluster + " updated to "
                + describe(campaign.target()) + " and back in service", AuditEvent.Outcome.SUCCESS));
        context.boundary().reached(id, "done " + cluster);
    }

    /**
     * The daemons a drain stops and an undrain starts, in start order: the campaign's label when one was given, else
     * those of the cluster's inference runtime (the bundled node: its one daemon).
     */
    private List<String> serviceLabels(CampaignStore.Campaign campaign, String cluster) {
        if (!campaign.serviceLabel().equals(OsUpdateCampaigns.DEFAULT_SERVICE_LABEL)) {
            return List.of(campaign.serviceLabel());
        }
        return context.desiredState().cluster(cluster).map(io.macfleet.inventory.Cluster::inference)
                .flatMap(inference -> io.macfleet.runtime.InferenceRuntimes.standard().find(inference.runtime()))
                .map(io.macfleet.runtime.InferenceRuntime::startOrder).orElse(List.of(campaign.serviceLabel()));
    }

}
