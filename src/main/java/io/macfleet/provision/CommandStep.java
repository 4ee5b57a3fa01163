package io.macfleet.provision;

import io.macfleet.ssh.CommandResult;
import java.util.List;

/**
 * {@code type: command}: a check (a read-only command and its expected answer) and an action (commands run in
 * order, each must exit 0). Without an action the step only verifies; without a check it would run every time,
 * so a check is required.
 */
final class CommandStep implements StepDefinition {

    /** The step type {@code command}. */
    @jakarta.inject.Singleton
    static final class Type extends SimpleStepType<Parameters> {
        Type() {
            super("command", Parameters.class, (parameters, files) -> new CommandStep(parameters));
        }
    }

    record Parameters(CheckSpec check, List<CommandSpec> action) {
        Parameters {
            if (check == null) {
                throw new IllegalArgumentException("'check' is required: how to tell that the step is already done");
            }
            action = action == null ? List.of() : List.copyOf(action);
        }
    }

    private final Parameters parameters;

    CommandStep(Parameters parameters) {
        this.parameters = parameters;
    }

    Parameters parameters() {
        return parameters;
    }

    @Override
    public CheckResult check(MachineContext context) {
        return parameters.check().evaluate(context, false);
    }

    @Override
    public boolean hasAction() {
        return !parameters.action().isEmpty();
    }

    @Override
    public String act(MachineContext context) {
        if (!hasAction()) {
            return StepDefinition.super.act(context);
        }
        StringBuilder summary = new StringBuilder();
        for (CommandSpec command : parameters.action()) {
            CommandResult result = context.execute(command, false, false);
            String shown = "`" + result.command().display() + "`";
            if (!result.succeeded()) {
                String error = (result.stderr().isBlank() ? result.stdout() : result.stderr()).strip();
                throw new StepFailedException(context.redact(shown + " exited with " + result.exitStatus()
                        + (error.isEmpty() ? "" : ": " + error.lines().findFirst().orElse(""))));
            }
            summary.append(summary.isEmpty() ? "" : "; ").append(shown).append(" ok");
        }
        return context.redact(summary.toString());
    }
}
