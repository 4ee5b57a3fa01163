package io.macfleet.provision;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code type: operator}: something only a person at the machine can do (macOS Recovery). The verification
 * checks say whether it is done; when they fail, the run asks a person, machine by machine, with numbered
 * instructions, what they will see and how long it takes, then polls the machine with fresh SSH connections
 * until the verification passes or the wait times out. A step without verification checks (nothing observable
 * over SSH) counts as done once a person confirmed it for that machine. {@code notNeededWhen}: a check that,
 * when it passes, says the machine does not need the step at all.
 */
final class OperatorStep implements StepDefinition, OperatorWalkthrough {

    /** The step type {@code operator}. */
    @jakarta.inject.Singleton
    static final class Type extends SimpleStepType<Parameters> {
        Type() {
            super("operator", Parameters.class, (parameters, files) -> new OperatorStep(parameters));
        }
    }

    static final String UNREACHABLE = "not reachable over SSH";

    record Parameters(String title, List<String> instructions, String expect, Integer waitSeconds, List<CheckSpec> verification,
                      Integer timeoutSeconds, Integer pollSeconds, CheckSpec notNeededWhen) {
        Parameters {
            if (title == null || title.isBlank()) {
                throw new IllegalArgumentException("'title' is required: what the person does, in a few words");
            }
            if (instructions == null || instructions.isEmpty()) {
                throw new IllegalArgumentException("'instructions' is required: the numbered steps a person follows");
            }
            instructions = List.copyOf(instructions);
            instructions.forEach(Templates::validate);
            if (expect == null || expect.isBlank()) {
                throw new IllegalArgumentException("'expect' is required: what the person will see when it worked");
            }
            waitSeconds = waitSeconds == null ? 300 : waitSeconds;
            verification = verification == null ? List.of() : List.copyOf(verification);
            timeoutSeconds = timeoutSeconds == null ? 900 : timeoutSeconds;
            pollSeconds = pollSeconds == null ? 5 : pollSeconds;
            if (waitSeconds < 0 || timeoutSeconds < 1 || pollSeconds < 1) {
                throw new IllegalArgumentException("waitSeconds must be at least 0, timeoutSeconds and pollSeconds at least 1");
            }
        }
    }

    private final Parameters parameters;

    OperatorStep(Parameters parameters) {
        this.parameters = parameters;
    }

    Parameters parameters() {
        return parameters;
    }

    @Override
    public CheckResult check(MachineContext context) {
        if (parameters.notNeededWhen() != null) {
            CheckResult notNeeded = parameters.notNeededWhen().evaluate(context, false);
            if (notNeeded.satisfied()) {
                return CheckResult.satisfied("not needed on this machine: " + notNeeded.detail());
            }
        }
        if (parameters.verification().isEmpty()) {
            return context.operatorConfirmedBefore()
                    ? CheckResult.satisfied("confirmed by a person earlier (nothing to verify over SSH)")
                    : CheckResult.notSatisfied("needs a person: " + parameters.title());
        }
        return verify(context, false);
    }

    @Override
    public java.util.Optional<OperatorWalkthrough> walkthrough() {
        return java.util.Optional.of(this);
    }

    @Override
    public boolean verifiable() {
        return !parameters.verification().isEmpty();
    }

    @Override
    public boolean unreachable(CheckResult verification) {
        return verification.detail().startsWith(UNREACHABLE);
    }

    @Override
    public int timeoutSeconds() {
        return parameters.timeoutSeconds();
    }

    @Override
    public int pollSeconds() {
        return parameters.pollSeconds();
    }

    /** Every verification check; unreachable counts as not (yet) verified. */
    @Override
    public CheckResult verify(MachineContext context, boolean freshConnection) {
        List<String> wrong = new ArrayList<>();
        List<String> wrongPlain = new ArrayList<>();
        List<String> right = new ArrayList<>();
        for (CheckSpec check : parameters.verification()) {
            CheckResult result;
            try {
                result = check.evaluate(context, freshConnection);
            } catch (StepFailedException e) {
                result = CheckResult.notSatisfied(UNREACHABLE + ": " + e.getMessage(), UNREACHABLE + " (yet)");
            }
            (result.satisfied() ? right : wrong).add(result.detail());
            if (!result.satisfied()) {
                wrongPlain.add(result.plain());
            }
            if (!result.satisfied() && result.detail().startsWith(UNREACHABLE)) {
                break;
            }
        }
        return wrong.isEmpty() ? CheckResult.satisfied(String.join("; ", right))
                : CheckResult.notSatisfied(String.join("; ", wrong), String.join("; ", wrongPlain));
        // An unreachable machine's detail starts with UNREACHABLE (the loop stops at the first such check).
    }

    /** The walkthrough for one machine: title, numbered instructions, what they will see and how long to wait. */
    @Override
    public OperatorRequest request(long runId, String step, MachineContext context, String whatIsWrong) {
        List<String> numbered = new ArrayList<>();
        for (String instruction : parameters.instructions()) {
            numbered.add(Templates.render(instruction, context.variables(Map.of())).text());
        }
        return new OperatorRequest(runId, context.machine(), step, parameters.title(), numbered, parameters.expect(),
                parameters.waitSeconds(), whatIsWrong);
    }
}
