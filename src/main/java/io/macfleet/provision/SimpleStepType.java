package io.macfleet.provision;

import java.util.function.BiFunction;

/**
 * A step type given by its name, its parameters record and how to make the step: the common case, so that a step
 * type bean is a few lines ({@code @Singleton static final class Type extends SimpleStepType<Parameters>}).
 */
public abstract class SimpleStepType<P extends Record> implements StepType<P> {

    private final String name;
    private final Class<P> parameters;
    private final BiFunction<P, PlaybookFiles, StepDefinition> definition;

    protected SimpleStepType(String name, Class<P> parameters, BiFunction<P, PlaybookFiles, StepDefinition> definition) {
        this.name = name;
        this.parameters = parameters;
        this.definition = definition;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Class<P> parameters() {
        return parameters;
    }

    @Override
    public final StepDefinition define(P read, PlaybookFiles files) {
        return definition.apply(read, files);
    }
}
