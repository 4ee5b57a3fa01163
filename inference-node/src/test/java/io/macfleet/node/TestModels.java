package io.macfleet.node;

import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.generator.QuantizationMix;
import io.macfleet.node.gguf.GgmlType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/** Small generated models, written once per JVM, shape, architecture and type. */
public final class TestModels {
    private static final ConcurrentHashMap<String, Path> MODELS = new ConcurrentHashMap<>();

    private TestModels() {
    }

    public static Path tiny(GgmlType type) {
        return tiny(ModelGenerator.Architecture.LLAMA, type);
    }

    public static Path tiny(ModelGenerator.Architecture architecture, GgmlType type) {
        return model(ModelGenerator.TINY, architecture, QuantizationMix.of(type));
    }

    /** The small preset (widths of whole K-quant super-blocks) with the types of {@code mix}. */
    public static Path small(ModelGenerator.Architecture architecture, QuantizationMix mix) {
        return model(ModelGenerator.SMALL, architecture, mix);
    }

    private static Path model(ModelGenerator.Shape shape, ModelGenerator.Architecture architecture, QuantizationMix mix) {
        return MODELS.computeIfAbsent(shape.name() + "/" + architecture + "/" + mix.name(), key -> {
            try {
                Path directory = Files.createTempDirectory("inference-node-test");
                Path file = directory.resolve(shape.name() + "-" + architecture.name().toLowerCase() + "-" + mix.name() + ".gguf");
                ModelGenerator.write(shape, architecture, mix, 1, file);
                file.toFile().deleteOnExit();
                directory.toFile().deleteOnExit();
                return file;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
