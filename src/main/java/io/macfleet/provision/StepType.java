package io.macfleet.provision;

/**
 * A kind of playbook step ({@code type:} in a playbook), found by name in {@link StepTypes}. A new step type is one
 * class that implements this interface and is a CDI bean ({@code @Singleton}); nothing shared is edited. It also
 * needs an entry in {@code schemas/playbook.schema.json} ({@code StepTypesSchemaTest} fails without one).
 *
 * @param <P> the record the step's {@code params:} are read into (Jackson, unknown keys rejected); its compact
 *            constructor validates them and throws {@link IllegalArgumentException} with a message naming the
 *            parameter, which the loader reports with the playbook's file:line:column
 */
public interface StepType<P extends Record> {

    /** The name playbooks use in {@code type:}; lower case with dashes. */
    String name();

    /** The parameters record. */
    Class<P> parameters();

    /** Where the step acts: each machine on its own (the default), or once per cluster when all its machines got there. */
    default PlaybookStep.Scope scope() {
        return PlaybookStep.Scope.MACHINE;
    }

    /**
     * The step as it runs, from its validated parameters.
     *
     * @param files the text of files next to the playbook (template files); throws {@link IllegalArgumentException}
     *              for a missing file, reported like a parameter error
     */
    StepDefinition define(P parameters, PlaybookFiles files);

    /** The files next to a playbook, by name. */
    @FunctionalInterface
    interface PlaybookFiles {
        String text(String name);
    }
}
