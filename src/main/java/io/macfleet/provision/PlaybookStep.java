package io.macfleet.provision;

/**
 * One step of a playbook.
 *
 * @param when null, or the condition on a machine's facts under which the step applies
 * @param definition the typed step (its parameters validated at load)
 * @param line where the step starts in the playbook file
 */
public record PlaybookStep(String name, String type, Scope scope, Condition when, StepDefinition definition, int line) {

    /** Where a step acts: on each machine on its own, or once for a cluster when all its machines got there. */
    public enum Scope {
        MACHINE, CLUSTER;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
