package io.macfleet.osupdate;

import io.macfleet.audit.AuditEvent;
import io.macfleet.inventory.Machine;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.osupdate.OsUpdateCampaigns.InvalidCampaignException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * Runs a campaign's clusters in waves: the first (the canary) alone, then {@code clustersAtOnce} at a time; each
 * cluster is driven step by step from its stored step, so a killed process resumes where it was. A failed wave stops
 * the campaign unless it continues on failure; a pause stops it at the next check.
 */
final class WaveExecutor {
    /** How one cluster's run ended. */
    enum Outcome { DONE, FAILED, PAUSED }

    private final CampaignContext context;
    private final CampaignPlanner planner;
    private final ClusterSteps steps;
    private final UpdateWatch updates;

    WaveExecutor(CampaignContext context, CampaignPlanner planner) {
        this.context = context;
        this.planner = planner;
        this.steps = new ClusterSteps(context, planner);
        this.updates = new UpdateWatch(context);
    }

    CampaignView execute(CampaignStore.Campaign campaign, String actor, String owner) {
        UpdateMethod method = planner.method(campaign.method()).orElseThrow(() -> new InvalidCampaignException("campaign " + campaign.id()
                + " uses update method '" + campaign.method() + "', which this macfleet does not have " + planner.methodNames()));
        CampaignStore store = context.store();
        List<String> order = new ArrayList<>(store.clusterSteps(campaign.id()).keySet());
        boolean anyFailed = false;
        int index = 0;
        while (index < order.size()) {
            int size = index == 0 ? 1 : campaign.clustersAtOnce();
            List<String> wave = order.subList(index, Math.min(order.size(), index + size));
            List<Outcome> outcomes = wave.size() == 1 ? List.of(runCluster(campaign, wave.getFirst(), method, actor, owner))
                    : inParallel(wave, cluster -> runCluster(campaign, cluster, method, actor, owner));
            if (outcomes.contains(Outcome.PAUSED)) {
                return store.view(campaign.id()).orElseThrow();
            }
            if (outcomes.contains(Outcome.FAILED)) {
                anyFailed = true;
                if (!campaign.continueOnFailure()) {
                    break;
                }
            }
            index += wave.size();
        }
        CampaignStatus end = anyFailed ? CampaignStatus.FAILED : CampaignStatus.SUCCEEDED;
        if (context.states().campaign(campaign.id(), CampaignStatus.RUNNING, end)) {
            context.audit().record(new AuditEvent(context.clock().instant(), actor, null, "os-update.campaign", "campaign " + campaign.id() + " " + end.wire(),
                    anyFailed ? AuditEvent.Outcome.FAILURE : AuditEvent.Outcome.SUCCESS));
        }
        return store.view(campaign.id()).orElseThrow();
    }

    private static <T> List<Outcome> inParallel(List<T> items, Function<T, Outcome> work) {
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Outcome>> futures = items.stream().map(item -> threads.submit(() -> work.apply(item))).toList();
            List<Outcome> outcomes = new ArrayList<>();
            for (Future<Outcome> future : futures) {
                try {
                    outcomes.add(future.get());
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    throw (RuntimeException) e.getCause();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while updating clusters", e);
                }
            }
            return outcomes;
        }
    }

    /** Drives one cluster from its stored step until it is done, failed or the campaign is paused. */
    private Outcome runCluster(CampaignStore.Campaign campaign, String cluster, UpdateMethod method, String actor, String owner) {
        long id = campaign.id();
        CampaignStore store = context.store();
        while (true) {
            if (context.paused(id)) {
                return Outcome.PAUSED;
            }
            ClusterStep step = store.clusterSteps(id).get(cluster);
            // The install time may have changed on an operator's resume: always the stored one.
            OsUpdateTarget target = store.campaign(id).orElseThrow().target();
            Map<String, Machine> machines = machinesOf(id, cluster);
            if (machines == null && step != ClusterStep.DONE && step != ClusterStep.FAILED) {
                context.states().failCluster(id, cluster, step, "a machine of the campaign is no longer in the applied inventory (or its cluster changed)");
                return Outcome.FAILED;
            }
            switch (step) {
                case DONE -> {
                    return Outcome.DONE;
                }
                case FAILED -> {
                    return Outcome.FAILED;
                }
                case PENDING -> {
                    context.states().cluster(id, cluster, ClusterStep.PREFLIGHT);
                    context.boundary().reached(id, "preflight " + cluster);
                }
                case PREFLIGHT -> steps.preflight(id, cluster, machines, target, method, actor);
                case DRAINING -> steps.drain(campaign, cluster, machines, actor);
                case UPDATING -> {
                    if (updates.update(id, cluster, machines, target, method, actor, owner) == Outcome.PAUSED) {
                        return Outcome.PAUSED;
                    }
                }
                case VERIFYING -> steps.verify(id, cluster, machines, target, actor);
                case UNDRAINING -> steps.undrain(campaign, cluster, machines, actor);
            }
        }
    }

    /** The campaign's machines of a cluster from the applied inventory, or null when one is gone or moved. */
    private Map<String, Machine> machinesOf(long id, String cluster) {
        Map<String, Machine> machines = new LinkedHashMap<>();
        for (CampaignStore.MachineRow row : context.store().machines(id, cluster)) {
            Optional<Machine> machine = context.desiredState().machine(row.machine());
            if (machine.isEmpty() || !cluster.equals(machine.get().cluster())) {
                return null;
            }
            machines.put(row.machine(), machine.get());
        }
        return machines;
    }
}
