package io.macfleet.models;

import java.util.List;

/**
 * A model of the catalogue: its name (what the inventory's {@code inference.model} and the commands use), its format
 * ({@code gguf} or {@code mlx}), what its header or config.json says (architecture, quantization), its files with
 * sizes and SHA-256, their total, the runtimes that can serve it and where it came from.
 */
public record CatalogueModel(String name, String format, String architecture, String quantization,
                             List<ModelFile> files, long totalBytes, List<String> runtimes, String source) {

    public CatalogueModel {
        files = List.copyOf(files);
        runtimes = List.copyOf(runtimes);
    }
}
