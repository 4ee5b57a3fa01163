package io.macfleet.provision;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/** An operator step of a run on one machine: what a person does (Recovery, a cable), asked for, waited for and verified. */
final class OperatorSteps {

    private final ProvisioningStore store;
    private final AuditLog audit;
    private final Clock clock;
    private final RunLease lease;
    /** Waits between two verifications; tests move their clock instead of sleeping. */
    private final Consumer<Duration> pause;

    OperatorSteps(ProvisioningStore store, AuditLog audit, Clock clock, RunLease lease) {
        this(store, audit, clock, lease, MachineContext::pause);
    }

    OperatorSteps(ProvisioningStore store, AuditLog audit, Clock clock, RunLease lease, Consumer<Duration> pause) {
        this.store = store;
        this.audit = audit;
        this.clock = clock;
        this.lease = lease;
        this.pause = pause;
    }

    record OperatorResult(StepStatus status, String summary, OperatorRequest request) {
    }

    /**
     * The walkthrough of an operator step on one machine: check, ask (every machine that needs it at once: a person
     * does several Macs in Recovery side by side), check again while waiting for the answer, poll with fresh
     * connections until the verification passes or times out, record who confirmed; repeat when asked to.
     */
    OperatorResult run(long runId, PlaybookStep step, OperatorWalkthrough operator, MachineContext context, ProvisioningListener listener) {
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
                    CheckResult verified = verifyAfterConfirmation(operator, context, machine, step.name(), listener);
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
                if (lease.lost()) {
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
    CheckResult verifyAfterConfirmation(OperatorWalkthrough operator, MachineContext context, String machine, String step,
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
            pause.accept(Duration.ofSeconds(operator.pollSeconds()));
        }
    }
}
