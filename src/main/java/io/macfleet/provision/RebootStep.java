package io.macfleet.provision;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * {@code type: reboot}: restarts the machine ({@code sudo -n /sbin/shutdown -r now}) and waits until SSH answers
 * again, polling with fresh connections, up to {@code timeoutSeconds}. With {@code ifChanged} (the default) it
 * reboots only when an earlier step changed something on the machine in this run: a rerun does not reboot.
 */
final class RebootStep implements StepDefinition {

    /** The step type {@code reboot}. */
    @jakarta.inject.Singleton
    static final class Type extends SimpleStepType<Parameters> {
        Type() {
            super("reboot", Parameters.class, (parameters, files) -> new RebootStep(parameters));
        }
    }

    private static final CommandSpec SHUTDOWN = new CommandSpec(List.of("/sbin/shutdown", "-r", "now"), true, null);

    record Parameters(Integer timeoutSeconds, Integer pollSeconds, Boolean ifChanged, Integer settleSeconds) {
        Parameters {
            timeoutSeconds = timeoutSeconds == null ? 600 : timeoutSeconds;
            pollSeconds = pollSeconds == null ? 5 : pollSeconds;
            ifChanged = ifChanged == null || ifChanged;
            settleSeconds = settleSeconds == null ? 0 : settleSeconds;
            if (timeoutSeconds < 1 || pollSeconds < 1 || settleSeconds < 0) {
                throw new IllegalArgumentException("timeoutSeconds and pollSeconds must be at least 1, settleSeconds at least 0");
            }
        }
    }

    private final Parameters parameters;

    RebootStep(Parameters parameters) {
        this.parameters = parameters;
    }

    @Override
    public CheckResult check(MachineContext context) {
        if (context.previousStatus() == StepStatus.DONE) {
            return CheckResult.satisfied("rebooted earlier in this run");
        }
        if (parameters.ifChanged() && !context.changedInThisRun()) {
            return CheckResult.satisfied("no earlier step changed anything in this run: no reboot needed");
        }
        return CheckResult.notSatisfied("an earlier step changed the machine: a reboot is due");
    }

    @Override
    public boolean hasAction() {
        return true;
    }

    @Override
    public boolean verifyAfterAction() {
        return false;
    }

    /** A dry run changes nothing, so what counts is whether an earlier step of the dry run would change the machine. */
    @Override
    public StepPlan plan(MachineContext context, boolean earlierStepsChange) {
        return earlierStepsChange ? new StepPlan("would-run", "reboots after the changes above", false)
                : StepPlan.alreadyDone("no earlier step would change anything");
    }

    @Override
    public String act(MachineContext context) {
        Instant start = context.clock().instant();
        try {
            context.execute(SHUTDOWN, false, false);
        } catch (StepFailedException e) {
            // The connection may drop while shutdown answers: that is the reboot starting, not a failure.
            if (!(e.getCause() instanceof io.macfleet.ssh.SshException.ConnectionDropped)) {
                throw e;
            }
        }
        return waitUntilBack(context, Duration.ofSeconds(parameters.timeoutSeconds()), Duration.ofSeconds(parameters.pollSeconds()),
                Duration.ofSeconds(parameters.settleSeconds()), start);
    }

    /** Polls with fresh SSH connections until the machine answers; the message names the timeout when it does not. */
    static String waitUntilBack(MachineContext context, Duration timeout, Duration poll, Duration settle, Instant start) {
        // Give the machine a moment to go down, so the first poll does not see it still up before the reboot.
        MachineContext.pause(settle.isZero() ? Duration.ofMillis(Math.min(1000, poll.toMillis())) : settle);
        Instant deadline = start.plus(timeout);
        while (true) {
            if (context.answers()) {
                context.forgetFacts();
                return "rebooted; SSH answered again after " + Duration.between(start, context.clock().instant()).toSeconds() + " s";
            }
            if (!context.clock().instant().isBefore(deadline)) {
                throw new StepFailedException(context.machine() + " did not come back after the reboot: no SSH answer within the timeout of "
                        + timeout.toSeconds() + " s (check its power and network, or whether it is stuck in startup options or Recovery)");
            }
            context.progress("waiting for SSH after the reboot (" + Duration.between(start, context.clock().instant()).toSeconds() + " s)");
            MachineContext.pause(poll);
        }
    }
}
