package io.macfleet.node;

import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.gguf.GgmlType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/** Tiny generated models, written once per JVM, architecture and type. */
public final class TestModels {
    private static final ConcurrentHashMap<String, Path> MODELS = new ConcurrentHashMap<>();

    private TestModels() {
    }

    public static Path tiny(GgmlType type) {
        return tiny(ModelGenerator.Architecture.LLAMA, type);
    }

    public static Path tiny(ModelGenerator.Architecture architecture, GgmlType type) {
        return MODELS.computeIfAbsent(architecture + "/" + type, key -> {
            try {
                Path directory = Files.createTempDirectory("inference-node-test");
                Path file = directory.resolve("tiny-" + architecture.name().toLowerCase() + "-" + type.name().toLowerCase() + ".gguf");
                ModelGenerator.write(ModelGenerator.TINY, architecture, type, 1, file);
                file.toFile().deleteOnExit();
                directory.toFile().deleteOnExit();
                return file;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
