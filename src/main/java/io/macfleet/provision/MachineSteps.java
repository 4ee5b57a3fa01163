package io.macfleet.provision;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.facts.FactsService;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One machine's way through the playbook in one execution of a run: each step is checked, acted on when needed and
 * checked again; a step's new status is stored before the next one starts (so a run taken over after a crash
 * continues where this one stopped), and the machine ends ready, failed or waiting for a person.
 */
final class MachineSteps {

    private final long runId;
    private final List<PlaybookStep> steps;
    private final Map<String, RunView.Step> initial;
    private final ProvisioningStore store;
    private final FactsService facts;
    private final ClusterCabling cabling;
    private final AuditLog audit;
    private final Clock clock;
    private final String actor;
    private final RunLease lease;
    private final OperatorSteps operatorSteps;
    private final ProvisioningListener listener;
    private final RunProgress progress;

    MachineSteps(long runId, List<PlaybookStep> steps, Map<String, RunView.Step> initial, ProvisioningStore store, FactsService facts,
                 ClusterCabling cabling, AuditLog audit, Clock clock, String actor, RunLease lease, ProvisioningListener listener, RunProgress progress) {
        this.runId = runId;
        this.steps = steps;
        this.initial = initial;
        this.store = store;
        this.facts = facts;
        this.cabling = cabling;
        this.audit = audit;
        this.clock = clock;
        this.actor = actor;
        this.lease = lease;
        this.operatorSteps = new OperatorSteps(store, audit, clock, lease);
        this.listener = listener;
        this.progress = progress;
    }

    /** What one machine's walk through the playbook has seen so far. */
    private static final class Walk {
        final RunExecutor.Target target;
        final Map<String, Rendezvous> rendezvous;
        /** The steps that changed the machine, in this run (also before a crash: their stored status is done). */
        final Set<String> changed = ConcurrentHashMap.newKeySet();
        String last = "";
        /** A person's change verified over SSH (an operator step) changes what macfleet knows of the Mac too. */
        boolean verifiedByPerson;

        Walk(RunExecutor.Target target, Map<String, Rendezvous> rendezvous) {
            this.target = target;
            this.rendezvous = rendezvous;
        }
    }

    /**
     * How one step attempt ended: either settled on the spot (already stored and announced as needed; {@code last}, when
     * not null, is the machine's new last line), or an outcome still to be stored and announced.
     */
    private record Attempt(boolean settled, String last, StepStatus outcome, String summary, OperatorRequest waitingRequest) {
        static Attempt settled(String last) {
            return new Attempt(true, last, null, null, null);
        }

        static Attempt ended(StepStatus outcome, String summary) {
            return new Attempt(false, null, outcome, summary, null);
        }
    }

    void run(RunExecutor.Target target, Map<String, Rendezvous> rendezvous) {
        MachineContext context = target.context();
        String machine = context.machine();
        Walk walk = new Walk(target, rendezvous);
        for (PlaybookStep step : steps) {
            if (previous(machine, step) == StepStatus.DONE) {
                walk.changed.add(step.name());
            }
        }
        for (PlaybookStep step : steps) {
            if (lease.lost() || Thread.currentThread().isInterrupted()) {
                progress.move(machine, MachineState.IN_PROGRESS, "stopped: the run's lease was taken over by another process");
                return;
            }
            StepStatus previous = previous(machine, step);
            if (previous == StepStatus.SKIPPED_ALREADY_DONE || previous == StepStatus.SKIPPED_NOT_APPLICABLE) {
                // Settled earlier in this run: nothing was changed by it, so nothing to verify again.
                walk.last = step.name() + ": " + previous.label();
                continue;
            }
            context.beginStep(previous, () -> !walk.changed.isEmpty(), () -> store.confirmedBefore(machine, step.name()),
                    line -> listener.progress(machine, step.name(), line));
            Attempt attempt = attempt(walk, step, previous);
            if (attempt.settled()) {
                walk.last = attempt.last() == null ? walk.last : attempt.last();
                continue;
            }
            StepStatus outcome = attempt.outcome();
            String summary = context.redact(attempt.summary());
            if (lease.lost()) {
                return;
            }
            if (attempt.waitingRequest() != null) {
                store.stepWaiting(runId, attempt.waitingRequest(), clock.instant());
            } else {
                store.stepStatus(runId, machine, step.name(), outcome, summary, clock.instant());
            }
            listener.stepFinished(machine, step.name(), outcome, summary);
            walk.last = step.name() + ": " + summary;
            if (outcome == StepStatus.FAILED) {
                progress.move(machine, MachineState.FAILED, step.name() + ": " + summary);
                audit.record(new AuditEvent(clock.instant(), actor, machine, "provision.step", "run " + runId + " step " + step.name()
                        + " failed: " + ProvisioningStore.cap(summary), AuditEvent.Outcome.FAILURE));
                return;
            }
            if (outcome == StepStatus.WAITING_FOR_OPERATOR) {
                progress.move(machine, MachineState.WAITING_FOR_OPERATOR, step.name() + ": waiting for a person: " + summary.lines().findFirst().orElse(""));
                return;
            }
        }
        if ((walk.verifiedByPerson || !walk.changed.isEmpty()) && !context.dryRun()) {
            refreshFacts(context, listener);
        }
        progress.move(machine, MachineState.READY, walk.last);
    }

    private StepStatus previous(String machine, PlaybookStep step) {
        RunView.Step stored = initial.get(machine + "/" + step.name());
        return stored == null ? StepStatus.PENDING : StepStatus.fromLabel(stored.status());
    }

    private Attempt attempt(Walk walk, PlaybookStep step, StepStatus previous) {
        try {
            return step.scope() == PlaybookStep.Scope.CLUSTER ? clusterAttempt(walk, step, previous) : machineAttempt(walk, step, previous);
        } catch (StepFailedException e) {
            return Attempt.ended(StepStatus.FAILED, e.getMessage());
        } catch (RuntimeException e) {
            return Attempt.ended(StepStatus.FAILED, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    /** A cluster-scoped step: the machine waits for the others of its cluster in this batch; the step runs once for all. */
    private Attempt clusterAttempt(Walk walk, PlaybookStep step, StepStatus previous) {
        MachineContext context = walk.target.context();
        String machine = context.machine();
        String cluster = walk.target.cluster();
        Rendezvous meeting = cluster == null ? null : walk.rendezvous.get(step.name() + "/" + cluster);
        if (meeting == null) {
            String summary = machine + " belongs to no cluster";
            store.stepStatus(runId, machine, step.name(), StepStatus.SKIPPED_NOT_APPLICABLE, summary, clock.instant());
            listener.stepFinished(machine, step.name(), StepStatus.SKIPPED_NOT_APPLICABLE, summary);
            return Attempt.settled(null);
        }
        store.stepStarted(runId, machine, step.name(), clock.instant());
        listener.stepStarted(machine, step.name());
        listener.progress(machine, step.name(), "waiting for the other machines of " + cluster);
        Rendezvous.ClusterResult result = meeting.arrive(context, (arrived, missing) ->
                Rendezvous.clusterStep(step.definition(), new ClusterMeeting(cluster, arrived, missing, cabling, facts)));
        if (result.acted()) {
            walk.changed.add(step.name());
        }
        StepStatus outcome = !result.satisfied() ? StepStatus.FAILED
                : result.acted() || previous == StepStatus.DONE ? StepStatus.DONE : StepStatus.SKIPPED_ALREADY_DONE;
        return Attempt.ended(outcome, result.detail());
    }

    /** A step of this machine alone: checked, acted on when the check fails, checked again. */
    private Attempt machineAttempt(Walk walk, PlaybookStep step, StepStatus previous) {
        MachineContext context = walk.target.context();
        String machine = context.machine();
        if (previous == StepStatus.DONE) {
            // Done earlier in this run (before a crash or Ctrl-C): not redone; its check runs instead.
            CheckResult recheck = step.definition().check(context);
            if (recheck.satisfied()) {
                String summary = "done earlier in this run; the check still passes: " + context.redact(recheck.detail());
                listener.stepFinished(machine, step.name(), StepStatus.DONE, summary);
                return Attempt.settled(step.name() + ": " + summary);
            }
        }
        if (step.when() != null && !step.when().holds(context.facts())) {
            String summary = "not applicable: " + step.when().describe() + " does not hold";
            store.stepStatus(runId, machine, step.name(), StepStatus.SKIPPED_NOT_APPLICABLE, summary, clock.instant());
            listener.stepFinished(machine, step.name(), StepStatus.SKIPPED_NOT_APPLICABLE, summary);
            return Attempt.settled(step.name() + ": " + summary);
        }
        store.stepStarted(runId, machine, step.name(), clock.instant());
        listener.stepStarted(machine, step.name());
        Optional<OperatorWalkthrough> walkthrough = step.definition().walkthrough();
        if (walkthrough.isPresent()) {
            OperatorSteps.OperatorResult result = operatorSteps.run(runId, step, walkthrough.get(), context, listener);
            if (result.status() == StepStatus.WAITING_FOR_OPERATOR) {
                progress.waitingFor(result.request());
                return new Attempt(false, null, result.status(), result.summary(), result.request());
            }
            if (result.status() == StepStatus.DONE) {
                walk.verifiedByPerson = true;
            }
            return Attempt.ended(result.status(), result.summary());
        }
        CheckResult check = step.definition().check(context);
        if (check.satisfied()) {
            return Attempt.ended(previous == StepStatus.DONE ? StepStatus.DONE : StepStatus.SKIPPED_ALREADY_DONE, check.detail());
        }
        if (!step.definition().hasAction()) {
            return Attempt.ended(StepStatus.FAILED, check.detail());
        }
        String done = step.definition().act(context);
        walk.changed.add(step.name());
        if (!step.definition().verifyAfterAction()) {
            return Attempt.ended(StepStatus.DONE, done);
        }
        CheckResult after = step.definition().check(context);
        return Attempt.ended(after.satisfied() ? StepStatus.DONE : StepStatus.FAILED,
                after.satisfied() ? done : "the action ran (" + done + ") but the check still fails: " + after.detail());
    }

    /**
     * The run changed the machine and verified it over SSH: its stored facts (what the console, the API and the
     * cabling check read) are gathered again now, instead of saying "RDMA disabled" until the next observation. A
     * failure here costs the run nothing: the observation loop gathers again.
     */
    private static void refreshFacts(MachineContext context, ProvisioningListener listener) {
        try {
            context.gatherObservation();
        } catch (RuntimeException e) {
            listener.progress(context.machine(), "facts", "facts not gathered again after the run: " + e.getMessage());
        }
    }
}
