package io.macfleet.provision;

/**
 * A typed step: its parameters were validated when the playbook was loaded. Every step answers "already
 * done?" ({@link #check}) without changing anything on the machine; steps that can change something say so
 * with {@link #hasAction()} and do it in {@link #act}.
 */
sealed interface StepDefinition permits CommandStep, FactsStep, RebootStep, OperatorStep, CablingStep, TemplateStep {

    /** Whether the step is already satisfied on the machine. Never changes the machine. */
    CheckResult check(MachineContext context);

    /** Makes the step true on the machine; returns a short summary. Throws {@link StepFailedException}. */
    default String act(MachineContext context) {
        throw new StepFailedException("nothing can be done automatically: " + context.machine() + " does not satisfy the check");
    }

    default boolean hasAction() {
        return false;
    }

    /** Whether the check is worth running again after the action to verify it (false for reboots). */
    default boolean verifyAfterAction() {
        return true;
    }
}
