package io.macfleet.provision;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.facts.FactsService;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshTransport;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Works on one run whose lease this process holds: every machine on a virtual thread (at most {@code parallelism}
 * at a time), its steps in order; cluster-scoped steps wait until every machine of the cluster in the run got
 * there or stopped. State goes to the database as it changes, so another process can take over after a crash.
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
    private final AtomicBoolean leaseLost = new AtomicBoolean();
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
        store.runStatus(runId, "running", clock.instant(), false);
        listener.runStarted(runId, resumed, playbook.name(), targets.stream().map(t -> t.context().machine()).toList());
        Map<String, RunView.Step> initial = new HashMap<>();
        store.detail(runId).orElseThrow().steps().forEach(step -> initial.put(step.machine() + "/" + step.step(), step));
        Map<String, String> states = new ConcurrentHashMap<>();
        Map<String, String> messages = new ConcurrentHashMap<>();
        List<OperatorRequest> waiting = Collections.synchronizedList(new ArrayList<>());
        Thread heartbeat = Thread.ofVirtual().name("provision-lease-" + runId).start(() -> heartbeat(runId));
        Semaphore slots = new Semaphore(parallelism);
        int batchSize = serial <= 0 ? Math.max(1, targets.size()) : serial;
        boolean stopped = false;
        try {
            for (int first = 0; first < targets.size(); first += batchSize) {
                List<Target> batch = targets.subList(first, Math.min(targets.size(), first + batchSize));
                if (stopped) {
                    for (Target target : batch) {
                        states.put(target.context().machine(), "in-progress");
                        messages.put(target.context().machine(), "not started: more than " + maxFailPercent
                                + "% of an earlier batch failed (--max-fail-percent)");
                    }
                    continue;
                }
                runBatch(runId, playbook, steps, batch, initial, listener, states, messages, waiting, slots);
                long failed = batch.stream().filter(target -> "failed".equals(states.get(target.context().machine()))).count();
                stopped = failed * 100 > (long) maxFailPercent * batch.size();
            }
        } finally {
            heartbeat.interrupt();
        }
        String status = leaseLost.get() ? "running"
                : states.values().stream().anyMatch("failed"::equals) ? "failed"
                : states.values().stream().anyMatch("waiting-for-operator"::equals) ? "waiting-for-operator"
                : states.values().stream().allMatch("ready"::equals) ? "succeeded" : "running";
        if (!leaseLost.get()) {
            store.runStatus(runId, status, clock.instant(), status.equals("succeeded") || status.equals("failed"));
            store.release(runId, leaseOwner);
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "provision.run", "run " + runId + " (" + playbook.name() + ") ended "
                + status + ": " + states, status.equals("succeeded") ? AuditEvent.Outcome.SUCCESS : AuditEvent.Outcome.FAILURE));
        Map<String, String> ordered = new LinkedHashMap<>();
        Map<String, String> orderedMessages = new LinkedHashMap<>();
        for (Target target : targets) {
            String machine = target.context().machine();
            ordered.put(machine, states.getOrDefault(machine, "in-progress"));
            orderedMessages.put(machine, messages.getOrDefault(machine, ""));
        }
        return new RunOutcome(runId, resumed, status, ordered, orderedMessages, List.copyOf(waiting), Duration.ofNanos(System.nanoTime() - start));
    }

    /** Every machine of one batch through the playbook, at most {@code parallelism} at a time; returns when all stopped. */
    private void runBatch(long runId, Playbook playbook, List<PlaybookStep> steps, List<Target> batch, Map<String, RunView.Step> initial,
                          ProvisioningListener listener, Map<String, String> states, Map<String, String> messages,
                          List<OperatorRequest> waiting, Semaphore slots) {
        Map<String, Rendezvous> rendezvous = rendezvous(steps, batch);
        try (ExecutorService machines = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Target target : batch) {
                machines.submit(() -> {
                    String machine = target.context().machine();
                    boolean acquired = false;
                    try {
                        slots.acquire();
                        acquired = true;
                        runMachine(runId, playbook, steps, target, initial, rendezvous, listener, states, messages, waiting);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        states.put(machine, "in-progress");
                    } catch (RuntimeException e) {
                        states.put(machine, "failed");
                        messages.put(machine, machine + ": " + e);
                    } finally {
                        if (acquired) {
                            slots.release();
                        }
                        departEverywhere(rendezvous, target, machine + " stopped before this step");
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

    private void runMachine(long runId, Playbook playbook, List<PlaybookStep> steps, Target target, Map<String, RunView.Step> initial,
                            Map<String, Rendezvous> rendezvous, ProvisioningListener listener, Map<String, String> states,
                            Map<String, String> messages, List<OperatorRequest> waiting) {
        MachineContext context = target.context();
        String machine = context.machine();
        Set<String> changed = ConcurrentHashMap.newKeySet();
        for (PlaybookStep step : steps) {
            RunView.Step stored = initial.get(machine + "/" + step.name());
            if (stored != null && StepStatus.fromLabel(stored.status()) == StepStatus.DONE) {
                changed.add(step.name());
            }
        }
        String last = "";
        // A person's change verified over SSH (an operator step) changes what macfleet knows of the Mac too.
        boolean verifiedByPerson = false;
        for (PlaybookStep step : steps) {
            if (leaseLost.get() || Thread.currentThread().isInterrupted()) {
                states.put(machine, "in-progress");
                messages.put(machine, "stopped: the run's lease was taken over by another process");
                return;
            }
            RunView.Step stored = initial.get(machine + "/" + step.name());
            StepStatus previous = stored == null ? StepStatus.PENDING : StepStatus.fromLabel(stored.status());
            if (previous == StepStatus.SKIPPED_ALREADY_DONE || previous == StepStatus.SKIPPED_NOT_APPLICABLE) {
                // Settled earlier in this run: nothing was changed by it, so nothing to verify again.
                last = step.name() + ": " + previous.label();
                continue;
            }
            context.beginStep(previous, () -> !changed.isEmpty(), () -> store.confirmedBefore(machine, step.name()),
                    line -> listener.progress(machine, step.name(), line));
            StepStatus outcome;
            String summary;
            OperatorRequest waitingRequest = null;
            try {
                if (step.scope() == PlaybookStep.Scope.CLUSTER) {
                    Rendezvous meeting = target.cluster() == null ? null : rendezvous.get(step.name() + "/" + target.cluster());
                    if (meeting == null) {
                        outcome = StepStatus.SKIPPED_NOT_APPLICABLE;
                        summary = machine + " belongs to no cluster";
                        store.stepStatus(runId, machine, step.name(), outcome, summary, clock.instant());
                        listener.stepFinished(machine, step.name(), outcome, summary);
                        continue;
                    }
                    store.stepStarted(runId, machine, step.name(), clock.instant());
                    listener.stepStarted(machine, step.name());
                    listener.progress(machine, step.name(), "waiting for the other machines of " + target.cluster());
                    ClusterResult result = meeting.arrive(context, (arrived, missing) ->
                            clusterStep(step.definition(), new ClusterMeeting(target.cluster(), arrived, missing, cabling, facts)));
                    if (result.acted()) {
                        changed.add(step.name());
                    }
                    outcome = !result.satisfied() ? StepStatus.FAILED
                            : result.acted() || previous == StepStatus.DONE ? StepStatus.DONE : StepStatus.SKIPPED_ALREADY_DONE;
                    summary = result.detail();
                } else {
                    if (previous == StepStatus.DONE) {
                        // Done earlier in this run (before a crash or Ctrl-C): not redone; its check runs instead.
                        CheckResult recheck = step.definition().check(context);
                        if (recheck.satisfied()) {
                            summary = "done earlier in this run; the check still passes: " + context.redact(recheck.detail());
                            listener.stepFinished(machine, step.name(), StepStatus.DONE, summary);
                            last = step.name() + ": " + summary;
                            continue;
                        }
                    }
                    if (step.when() != null && !step.when().holds(context.facts())) {
                        outcome = StepStatus.SKIPPED_NOT_APPLICABLE;
                        summary = "not applicable: " + step.when().describe() + " does not hold";
                        store.stepStatus(runId, machine, step.name(), outcome, summary, clock.instant());
                        listener.stepFinished(machine, step.name(), outcome, summary);
                        last = step.name() + ": " + summary;
                        continue;
                    }
                    store.stepStarted(runId, machine, step.name(), clock.instant());
                    listener.stepStarted(machine, step.name());
                    java.util.Optional<OperatorWalkthrough> walkthrough = step.definition().walkthrough();
                    if (walkthrough.isPresent()) {
                        OperatorResult result = operatorStep(runId, step, walkthrough.get(), context, listener);
                        outcome = result.status();
                        summary = result.summary();
                        if (outcome == StepStatus.WAITING_FOR_OPERATOR) {
                            waiting.add(result.request());
                            waitingRequest = result.request();
                        } else if (outcome == StepStatus.DONE) {
                            verifiedByPerson = true;
                        }
                    } else {
                        CheckResult check = step.definition().check(context);
                        if (check.satisfied()) {
                            outcome = previous == StepStatus.DONE ? StepStatus.DONE : StepStatus.SKIPPED_ALREADY_DONE;
                            summary = check.detail();
                        } else if (!step.definition().hasAction()) {
                            outcome = StepStatus.FAILED;
                            summary = check.detail();
                        } else {
                            String done = step.definition().act(context);
                            changed.add(step.name());
                            if (step.definition().verifyAfterAction()) {
                                CheckResult after = step.definition().check(context);
                                outcome = after.satisfied() ? StepStatus.DONE : StepStatus.FAILED;
                                summary = after.satisfied() ? done : "the action ran (" + done + ") but the check still fails: " + after.detail();
                            } else {
                                outcome = StepStatus.DONE;
                                summary = done;
                            }
                        }
                    }
                }
            } catch (StepFailedException e) {
                outcome = StepStatus.FAILED;
                summary = e.getMessage();
            } catch (RuntimeException e) {
                outcome = StepStatus.FAILED;
                summary = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            summary = context.redact(summary);
            if (leaseLost.get()) {
                return;
            }
            if (waitingRequest != null) {
                store.stepWaiting(runId, waitingRequest, clock.instant());
            } else {
                store.stepStatus(runId, machine, step.name(), outcome, summary, clock.instant());
            }
            listener.stepFinished(machine, step.name(), outcome, summary);
            last = step.name() + ": " + summary;
            if (outcome == StepStatus.FAILED) {
                states.put(machine, "failed");
                messages.put(machine, step.name() + ": " + summary);
                audit.record(new AuditEvent(clock.instant(), actor, machine, "provision.step", "run " + runId + " step " + step.name()
                        + " failed: " + ProvisioningStore.cap(summary), AuditEvent.Outcome.FAILURE));
                return;
            }
            if (outcome == StepStatus.WAITING_FOR_OPERATOR) {
                states.put(machine, "waiting-for-operator");
                messages.put(machine, step.name() + ": waiting for a person: " + summary.lines().findFirst().orElse(""));
                return;
            }
        }
        if ((verifiedByPerson || !changed.isEmpty()) && !context.dryRun()) {
            refreshFacts(context, listener);
        }
        states.put(machine, "ready");
        messages.put(machine, last);
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

    private record OperatorResult(StepStatus status, String summary, OperatorRequest request) {
    }

    /**
     * The walkthrough of an operator step on one machine: check, ask (every machine that needs it at once: a person
     * does several Macs in Recovery side by side), check again while waiting for the answer, poll with fresh
     * connections until the verification passes or times out, record who confirmed; repeat when asked to.
     */
    private OperatorResult operatorStep(long runId, PlaybookStep step, OperatorWalkthrough operator, MachineContext context, ProvisioningListener listener) {
        CheckResult check = step.definition().check(context);
        if (check.satisfied()) {
            return new OperatorResult(context.previousStatus() == StepStatus.DONE ? StepStatus.DONE : StepStatus.SKIPPED_ALREADY_DONE, check.detail(), null);
        }
        String machine = context.machine();
        String wrong = check.detail();
        String wrongPlain = check.plain();
        while (true) {
            OperatorRequest request = operator.request(runId, step.name(), context, wrongPlain).withDetails(wrong).redacted(context::redact);
            store.stepWaiting(runId, request, clock.instant());
            Waited waited = awaitAnswer(runId, machine, step, operator, context, listener.operatorNeeded(request));
            if (waited.doneMeanwhile() != null) {
                listener.progress(machine, step.name(), "done meanwhile, checked again while waiting: " + waited.doneMeanwhile());
                return new OperatorResult(StepStatus.DONE, "done meanwhile (checked again before asking): " + waited.doneMeanwhile(), null);
            }
            OperatorAnswer answer = waited.answer();
            if (answer == null) {
                return new OperatorResult(StepStatus.DONE, "confirmed and verified elsewhere (console)", null);
            }
            switch (answer.kind()) {
                case DEFER -> {
                    return new OperatorResult(StepStatus.WAITING_FOR_OPERATOR, request.text(), request);
                }
                case ABORT -> {
                    return new OperatorResult(StepStatus.FAILED, "stopped by " + answer.actor() + " at the operator step: " + wrong, null);
                }
                case DONE -> {
                    CheckResult verified = awaitVerification(operator, context, machine, step.name(), listener);
                    Instant now = clock.instant();
                    store.confirmation(runId, machine, step.name(), answer.actor(), now, verified.satisfied(), context.redact(verified.detail()));
                    audit.record(new AuditEvent(now, answer.actor(), machine, "provision.operator.confirm", "run " + runId + " step " + step.name()
                            + " (" + request.title() + "): " + (verified.satisfied() ? "verified: " : "verification failed: ")
                            + ProvisioningStore.cap(verified.detail()), verified.satisfied() ? AuditEvent.Outcome.SUCCESS : AuditEvent.Outcome.FAILURE));
                    listener.operatorVerified(request, verified.satisfied(), verified.satisfied() ? verified.detail() : verified.plain());
                    if (verified.satisfied()) {
                        return new OperatorResult(StepStatus.DONE, "confirmed by " + answer.actor() + ", verified: " + verified.detail(), null);
                    }
                    wrong = "after the confirmation by " + answer.actor() + ", still wrong: " + verified.detail();
                    wrongPlain = "after the confirmation by " + answer.actor() + ", still wrong: " + verified.plain();
                }
                default -> throw new IllegalStateException();
            }
        }
    }

    /**
     * How waiting for a person ended: their answer; null when it was confirmed and verified elsewhere (the web
     * console); or, in {@code doneMeanwhile}, what the check saw when the machine turned out done without an answer.
     */
    private record Waited(OperatorAnswer answer, String doneMeanwhile) {
    }

    /**
     * Waits for the person's answer. Every poll interval the step's check runs again: a person doing several Macs at
     * once often finishes one before saying so, and a Mac found done is not asked for any more.
     */
    private Waited awaitAnswer(long runId, String machine, PlaybookStep step, OperatorWalkthrough operator, MachineContext context,
                               CompletableFuture<OperatorAnswer> answer) {
        long checkEvery = Duration.ofSeconds(operator.pollSeconds()).toNanos();
        long nextCheck = System.nanoTime() + checkEvery;
        while (true) {
            try {
                return new Waited(answer.get(1, TimeUnit.SECONDS), null);
            } catch (TimeoutException notYet) {
                if (store.stepState(runId, machine, step.name()).filter(state -> state == StepStatus.DONE).isPresent()) {
                    answer.cancel(true);
                    return new Waited(null, null);
                }
                if (leaseLost.get()) {
                    answer.cancel(true);
                    return new Waited(OperatorAnswer.defer(), null);
                }
                if (operator.verifiable() && System.nanoTime() - nextCheck >= 0) {
                    nextCheck = System.nanoTime() + checkEvery;
                    // Fresh connections: the Mac may have restarted since; unreachable (in Recovery) is not done yet.
                    CheckResult again = operator.verify(context, true);
                    if (again.satisfied() && answer.cancel(true)) {
                        return new Waited(null, again.detail());
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                answer.cancel(true);
                return new Waited(OperatorAnswer.defer(), null);
            } catch (ExecutionException | java.util.concurrent.CancellationException e) {
                return new Waited(OperatorAnswer.defer(), null);
            }
        }
    }

    /** Polls the verification with fresh connections (nothing held open while the Mac is in Recovery or rebooting). */
    private CheckResult awaitVerification(OperatorWalkthrough operator, MachineContext context, String machine, String step,
                                          ProvisioningListener listener) {
        if (!operator.verifiable()) {
            return CheckResult.satisfied("confirmed (nothing to verify over SSH)");
        }
        Instant started = clock.instant();
        Instant deadline = started.plusSeconds(operator.timeoutSeconds());
        int answeredButWrong = 0;
        while (true) {
            CheckResult result = operator.verify(context, true);
            if (result.satisfied()) {
                return result;
            }
            // The person says it is done, so the machine is either restarting or back: when it answers twice and is
            // still wrong, that is the answer (no point waiting out the timeout); while it does not answer, keep waiting.
            answeredButWrong = operator.unreachable(result) ? 0 : answeredButWrong + 1;
            if (answeredButWrong >= 2) {
                return result;
            }
            if (!clock.instant().isBefore(deadline)) {
                return CheckResult.notSatisfied(result.detail() + " (waited " + operator.timeoutSeconds() + " s)");
            }
            listener.progress(machine, step, "verifying (" + Duration.between(started, clock.instant()).toSeconds() + " s): " + result.detail());
            MachineContext.pause(Duration.ofSeconds(operator.pollSeconds()));
        }
    }

    private void departEverywhere(Map<String, Rendezvous> rendezvous, Target target, String reason) {
        if (target.cluster() == null) {
            return;
        }
        rendezvous.forEach((key, meeting) -> {
            if (key.endsWith("/" + target.cluster())) {
                meeting.depart(target.context().machine());
            }
        });
    }

    private void heartbeat(long runId) {
        Duration every = leaseTimeout.dividedBy(4);
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(every);
            } catch (InterruptedException e) {
                return;
            }
            try {
                if (!store.heartbeat(runId, leaseOwner, clock.instant())) {
                    leaseLost.set(true);
                    return;
                }
            } catch (RuntimeException e) {
                // A database hiccup: try again at the next beat; the lease only goes stale after several misses.
            }
        }
    }

    /** What a cluster-scoped step came to, once for all machines of the cluster: whether it holds, and whether it acted. */
    record ClusterResult(boolean satisfied, boolean acted, String detail) {
    }

    /** The check of a cluster step; when it fails and the step can act, the action once for the cluster and the check again. */
    private static ClusterResult clusterStep(StepDefinition definition, ClusterMeeting meeting) {
        CheckResult check = definition.checkCluster(meeting);
        if (check.satisfied() || !definition.hasAction()) {
            return new ClusterResult(check.satisfied(), false, check.detail());
        }
        String done;
        try {
            done = definition.actCluster(meeting);
        } catch (StepFailedException e) {
            return new ClusterResult(false, true, e.getMessage());
        }
        if (!definition.verifyAfterAction()) {
            return new ClusterResult(true, true, done);
        }
        CheckResult after = definition.checkCluster(meeting);
        return new ClusterResult(after.satisfied(), true, after.satisfied() ? done : "the action ran (" + done + ") but the check still fails: " + after.detail());
    }

    /** Where the machines of one cluster meet for a cluster-scoped step. */
    static final class Rendezvous {
        interface ClusterWork {
            ClusterResult run(List<MachineContext> arrived, List<String> missing);
        }

        private final Set<String> expected;
        private final Map<String, MachineContext> arrived = new LinkedHashMap<>();
        private final Set<String> departed = new java.util.HashSet<>();
        private boolean working;
        private ClusterResult result;

        Rendezvous(Set<String> expected) {
            this.expected = expected;
        }

        ClusterResult arrive(MachineContext context, ClusterWork work) {
            List<MachineContext> present;
            List<String> missing;
            synchronized (this) {
                arrived.put(context.machine(), context);
                notifyAll();
                while (arrived.size() + departed.size() < expected.size()) {
                    waitHere();
                }
                if (working || result != null) {
                    while (result == null) {
                        waitHere();
                    }
                    return result;
                }
                working = true;
                present = List.copyOf(arrived.values());
                missing = expected.stream().filter(name -> !arrived.containsKey(name)).sorted().toList();
            }
            ClusterResult computed;
            try {
                computed = work.run(present, missing);
            } catch (RuntimeException e) {
                computed = new ClusterResult(false, false, e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            synchronized (this) {
                result = computed;
                notifyAll();
            }
            return computed;
        }

        synchronized void depart(String machine) {
            if (!arrived.containsKey(machine)) {
                departed.add(machine);
                notifyAll();
            }
        }

        private void waitHere() {
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StepFailedException("interrupted while waiting for the other machines of the cluster");
            }
        }
    }
}
