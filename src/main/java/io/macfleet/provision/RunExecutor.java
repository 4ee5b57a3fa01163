package io.macfleet.provision;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.facts.FactsService;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * Works on one run whose lease this process holds: every machine on a virtual thread (at most {@code parallelism}
 * at a time), its steps in order ({@link MachineSteps}); cluster-scoped steps wait until every machine of the cluster
 * in the run got there or stopped ({@link Rendezvous}). State goes to the database as it changes, before what it
 * announces is done, so another process can take over after a crash. The run's states and which may follow which are
 * in {@link RunState}, the machines' in {@link MachineState}.
 */
final class RunExecutor {

    /** One machine of a run: its context and its cluster (null when it has none). */
    record Target(MachineContext context, String cluster) {
    }

    private final ProvisioningStore store;
    private final FactsService facts;
    private final ClusterCabling cabling;
    private final AuditLog audit;
    private final Clock clock;
    private final String actor;
    private final String leaseOwner;
    private final Duration leaseTimeout;
    private final int parallelism;
    /** Machines per batch of a rolling run (0: all at once), and the share of a batch that may fail before the rest stops. */
    private int serial;
    private int maxFailPercent = 100;

    RunExecutor(ProvisioningStore store, FactsService facts, ClusterCabling cabling, AuditLog audit, Clock clock, String actor,
                String leaseOwner, Duration leaseTimeout, int parallelism) {
        this.store = store;
        this.facts = facts;
        this.cabling = cabling;
        this.audit = audit;
        this.clock = clock;
        this.actor = actor;
        this.leaseOwner = leaseOwner;
        this.leaseTimeout = leaseTimeout;
        this.parallelism = parallelism;
    }

    /**
     * A rolling run, like Ansible's serial and max_fail_percentage: the machines go through the playbook in batches of
     * {@code serial}, one batch after the other (cluster steps meet within the batch), and when more than
     * {@code maxFailPercent} percent of a batch failed the later batches do not start.
     */
    RunExecutor rolling(int serial, int maxFailPercent) {
        this.serial = serial;
        this.maxFailPercent = maxFailPercent;
        return this;
    }

    RunOutcome execute(long runId, boolean resumed, Playbook playbook, List<PlaybookStep> steps, List<Target> targets, ProvisioningListener listener) {
        long start = System.nanoTime();
        RunView.Detail stored = store.detail(runId).orElseThrow();
        RunState state = RunState.fromLabel(stored.run().status()).to(RunState.RUNNING);
        store.runStatus(runId, state.label(), clock.instant(), false);
        listener.runStarted(runId, resumed, playbook.name(), targets.stream().map(t -> t.context().machine()).toList());
        Map<String, RunView.Step> initial = new HashMap<>();
        stored.steps().forEach(step -> initial.put(step.machine() + "/" + step.step(), step));
        RunProgress progress = new RunProgress();
        RunLease lease = new RunLease(store, runId, leaseOwner, leaseTimeout, clock).start();
        MachineSteps machineSteps = new MachineSteps(runId, steps, initial, store, facts, cabling, audit, clock, actor, lease, listener, progress);
        Semaphore slots = new Semaphore(parallelism);
        int batchSize = serial <= 0 ? Math.max(1, targets.size()) : serial;
        boolean stopped = false;
        try {
            for (int first = 0; first < targets.size(); first += batchSize) {
                List<Target> batch = targets.subList(first, Math.min(targets.size(), first + batchSize));
                if (stopped) {
                    for (Target target : batch) {
                        progress.move(target.context().machine(), MachineState.IN_PROGRESS, "not started: more than " + maxFailPercent
                                + "% of an earlier batch failed (--max-fail-percent)");
                    }
                    continue;
                }
                runBatch(steps, batch, machineSteps, progress, slots);
                long failed = batch.stream().filter(target -> progress.state(target.context().machine()) == MachineState.FAILED).count();
                stopped = failed * 100 > (long) maxFailPercent * batch.size();
            }
        } finally {
            lease.stop();
        }
        RunState result = state.to(progress.result(lease.lost()));
        if (!lease.lost()) {
            store.runStatus(runId, result.label(), clock.instant(), result.finished());
            lease.release();
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "provision.run", "run " + runId + " (" + playbook.name() + ") ended "
                + result.label() + ": " + progress, result == RunState.SUCCEEDED ? AuditEvent.Outcome.SUCCESS : AuditEvent.Outcome.FAILURE));
        List<String> machines = targets.stream().map(target -> target.context().machine()).toList();
        return new RunOutcome(runId, resumed, result.label(), progress.labels(machines), progress.messages(machines), progress.waiting(),
                Duration.ofNanos(System.nanoTime() - start));
    }

    /** Every machine of one batch through the playbook, at most {@code parallelism} at a time; returns when all stopped. */
    private void runBatch(List<PlaybookStep> steps, List<Target> batch, MachineSteps machineSteps, RunProgress progress, Semaphore slots) {
        Map<String, Rendezvous> rendezvous = rendezvous(steps, batch);
        try (ExecutorService machines = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Target target : batch) {
                machines.submit(() -> {
                    String machine = target.context().machine();
                    boolean acquired = false;
                    try {
                        slots.acquire();
                        acquired = true;
                        machineSteps.run(target, rendezvous);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        progress.move(machine, MachineState.IN_PROGRESS, null);
                    } catch (RuntimeException e) {
                        progress.move(machine, MachineState.FAILED, machine + ": " + e);
                    } finally {
                        if (acquired) {
                            slots.release();
                        }
                        departEverywhere(rendezvous, target);
                    }
                    return null;
                });
            }
        }
    }

    /** One meeting per cluster step and cluster, of the machines of this batch. */
    private static Map<String, Rendezvous> rendezvous(List<PlaybookStep> steps, List<Target> targets) {
        Map<String, Rendezvous> rendezvous = new ConcurrentHashMap<>();
        for (PlaybookStep step : steps) {
            if (step.scope() == PlaybookStep.Scope.CLUSTER) {
                Map<String, List<String>> members = new LinkedHashMap<>();
                for (Target target : targets) {
                    if (target.cluster() != null) {
                        members.computeIfAbsent(target.cluster(), key -> new ArrayList<>()).add(target.context().machine());
                    }
                }
                members.forEach((cluster, machines) -> rendezvous.put(step.name() + "/" + cluster, new Rendezvous(Set.copyOf(machines))));
            }
        }
        return rendezvous;
    }

    /** A machine that stopped (ended, failed, interrupted) is no longer waited for at any of its cluster's meetings. */
    private static void departEverywhere(Map<String, Rendezvous> rendezvous, Target target) {
        if (target.cluster() == null) {
            return;
        }
        rendezvous.forEach((key, meeting) -> {
            if (key.endsWith("/" + target.cluster())) {
                meeting.depart(target.context().machine());
            }
        });
    }
}
