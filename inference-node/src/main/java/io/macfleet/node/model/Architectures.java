package io.macfleet.node.model;

import io.macfleet.node.gguf.GgufFile;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The registry of architectures the node runs: adding one is a class and a line here. */
public final class Architectures {
    private static final List<Architecture> ALL = List.of(new LlamaFamily(), new DeepSeek2());
    private static final Map<String, Architecture> BY_NAME = new TreeMap<>();

    static {
        for (Architecture architecture : ALL) {
            for (String name : architecture.names()) {
                if (BY_NAME.put(name, architecture) != null) {
                    throw new IllegalStateException("architecture '" + name + "' registered twice");
                }
            }
        }
    }

    private Architectures() {
    }

    /** Every supported {@code general.architecture} value, sorted. */
    public static List<String> names() {
        return List.copyOf(BY_NAME.keySet());
    }

    /** The architecture of a file; refused naming the metadata key when the node does not run it. */
    public static Architecture of(GgufFile file) {
        return named(file, file.string("general.architecture"));
    }

    public static Architecture of(GgufFile file, LlamaConfig config) {
        return named(file, config.architecture());
    }

    private static Architecture named(GgufFile file, String name) {
        Architecture architecture = BY_NAME.get(name);
        if (architecture == null) {
            throw file.error("unsupported architecture '" + name + "' in metadata 'general.architecture' (supported: "
                    + String.join(", ", names()) + ")");
        }
        return architecture;
    }
}
