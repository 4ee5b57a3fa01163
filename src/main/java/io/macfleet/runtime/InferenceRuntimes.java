package io.macfleet.runtime;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The runtimes macfleet knows, by name. {@link #standard()} lists the built-in ones (the one place to add a runtime);
 * {@link #with(InferenceRuntime)} adds one more (a test's runtime, as a test fleet adds a simulated program). Two
 * runtimes answering the same name, or a runtime without its settings schema on the class path, are refused here.
 */
public final class InferenceRuntimes {

    private final Map<String, InferenceRuntime> byName;

    private InferenceRuntimes(List<InferenceRuntime> runtimes) {
        Map<String, InferenceRuntime> map = new LinkedHashMap<>();
        for (InferenceRuntime runtime : runtimes) {
            if (map.putIfAbsent(runtime.name(), runtime) != null) {
                throw new IllegalArgumentException("two inference runtimes are named " + runtime.name());
            }
            String schema = io.macfleet.inventory.InventoryLoader.RUNTIME_SCHEMAS + runtime.name() + ".schema.json";
            if (InferenceRuntimes.class.getClassLoader().getResource(schema) == null
                    && Thread.currentThread().getContextClassLoader().getResource(schema) == null) {
                throw new IllegalArgumentException("inference runtime " + runtime.name() + " has no settings schema " + schema
                        + " on the class path: the inventory could not name it");
            }
        }
        this.byName = map;
    }

    /** The built-in runtimes: the bundled node, llama.cpp and MLX. */
    public static InferenceRuntimes standard() {
        return new InferenceRuntimes(List.of(new BundledRuntime(), new LlamaCppRuntime(), new MlxRuntime()));
    }

    /** These runtimes and one more. */
    public InferenceRuntimes with(InferenceRuntime runtime) {
        List<InferenceRuntime> all = new ArrayList<>(byName.values());
        all.add(runtime);
        return new InferenceRuntimes(all);
    }

    public Optional<InferenceRuntime> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public InferenceRuntime get(String name) {
        return find(name).orElseThrow(() -> new RuntimeRefused("unknown inference runtime '" + name + "'; expected one of "
                + String.join(", ", byName.keySet())));
    }

    public List<InferenceRuntime> all() {
        return List.copyOf(byName.values());
    }

    /** Every label any runtime may install: switching a cluster to one runtime boots the others' out. */
    public List<String> allLabels() {
        return byName.values().stream().flatMap(runtime -> runtime.labels().stream()).distinct().toList();
    }
}
