package io.macfleet.provision;

import io.quarkus.arc.All;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * The registered step types, by name: in the application every {@link StepType} bean; outside CDI (hand-wired tests,
 * the static {@link PlaybookLoader} entries) the built-in ones. The loader, the run and the dry run find step types
 * here and nowhere else.
 */
@Singleton
public class StepTypes {

    private final Map<String, StepType<?>> byName = new LinkedHashMap<>();

    @Inject
    public StepTypes(@All List<StepType<?>> types) {
        List<String> documentedOrder = BUILT_IN.stream().map(StepType::name).toList();
        List<StepType<?>> sorted = new ArrayList<>(types);
        // Built-in types first, in the order the docs and messages have always listed them; others by name.
        sorted.sort(Comparator.<StepType<?>>comparingInt(type -> documentedOrder.contains(type.name()) ? documentedOrder.indexOf(type.name())
                : documentedOrder.size()).thenComparing(StepType::name));
        for (StepType<?> type : sorted) {
            if (!type.name().matches("[a-z][a-z0-9-]*")) {
                throw new IllegalStateException("step type " + type.getClass().getName() + " has the name '" + type.name()
                        + "'; expected lower case letters, digits and dashes");
            }
            if (PlaybookLoader.RESERVED_TYPES.containsKey(type.name())) {
                throw new IllegalStateException("step type " + type.getClass().getName() + " takes the reserved name '" + type.name() + "'");
            }
            StepType<?> earlier = byName.putIfAbsent(type.name(), type);
            if (earlier != null) {
                throw new IllegalStateException("two step types named '" + type.name() + "': " + earlier.getClass().getName()
                        + " and " + type.getClass().getName());
            }
        }
    }

    /**
     * The step types that come with macfleet, for code that runs without CDI. {@code StepTypesSchemaTest} keeps it equal to the beans.
     * This package's own types are named here; a step type of another package (a workflow above provisioning, such as
     * {@code inference-node}) is listed in {@code META-INF/services/io.macfleet.provision.StepType} instead, so that provisioning
     * never imports the packages built on it. The services file's order is the documented order after this package's types.
     */
    private static final List<StepType<?>> BUILT_IN = builtInTypes();

    private static List<StepType<?>> builtInTypes() {
        List<StepType<?>> types = new ArrayList<>(List.of(new CommandStep.Type(), new FactsStep.Type(), new RebootStep.Type(),
                new OperatorStep.Type(), new CablingStep.Type(), new TemplateStep.Type(), new ThunderboltNetworkStep.Type()));
        for (StepType<?> type : ServiceLoader.load(StepType.class, StepTypes.class.getClassLoader())) {
            types.add(type);
        }
        return List.copyOf(types);
    }

    private static final StepTypes BUILT_IN_TYPES = new StepTypes(BUILT_IN);

    public static StepTypes builtIn() {
        return BUILT_IN_TYPES;
    }

    public Optional<StepType<?>> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The names, built-in types first in their documented order. */
    public List<String> names() {
        return List.copyOf(byName.keySet());
    }

    public List<StepType<?>> all() {
        return List.copyOf(byName.values());
    }
}
