package io.macfleet.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.deployment.NodeRelease;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * An MLX model directory on this host (what mlx_lm's load and sharded_load read: config.json, the safetensors, the
 * tokenizer files), checked before anything is copied: config.json must be there, and every shard that
 * model.safetensors.index.json's weight_map names (or at least one .safetensors file without an index).
 */
record MlxModel(Path directory, List<ModelFile> files, List<String> subdirectories, String digest) {

    record ModelFile(Path path, String sha256, long size) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    static MlxModel of(Path directory) {
        if (!Files.isDirectory(directory)) {
            throw new RuntimeRefused("model " + directory + " is not a directory; the MLX runtime serves an MLX model directory"
                    + " (config.json, *.safetensors, tokenizer files), e.g. one made by mlx_lm.convert or downloaded from mlx-community");
        }
        if (!Files.isRegularFile(directory.resolve("config.json"))) {
            throw new RuntimeRefused("model " + directory + " has no config.json; mlx_lm reads the architecture from it: give the whole model"
                    + " directory (config.json, *.safetensors, tokenizer files)");
        }
        Path index = directory.resolve("model.safetensors.index.json");
        if (Files.isRegularFile(index)) {
            TreeSet<String> shards = new TreeSet<>();
            try {
                JsonNode weightMap = JSON.readTree(index.toFile()).path("weight_map");
                weightMap.forEach(shard -> shards.add(shard.asText()));
            } catch (IOException e) {
                throw new RuntimeRefused("model " + directory + ": model.safetensors.index.json cannot be read (" + e.getMessage() + ")");
            }
            List<String> missing = shards.stream().filter(shard -> !Files.isRegularFile(directory.resolve(shard))).toList();
            if (!missing.isEmpty()) {
                throw new RuntimeRefused("model " + directory + " is missing " + missing.size() + " of the " + shards.size()
                        + " shards model.safetensors.index.json names: " + String.join(", ", missing.stream().limit(10).toList())
                        + (missing.size() > 10 ? ", ..." : "") + " (an interrupted download?); nothing was copied");
            }
        }
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(directory)) {
            paths = walk.filter(Files::isRegularFile).filter(path -> !directory.relativize(path).toString().startsWith("."))
                    .sorted().toList();
        } catch (IOException e) {
            throw new RuntimeRefused("cannot read the model directory " + directory + ": " + e.getMessage());
        }
        if (paths.stream().noneMatch(path -> path.getFileName().toString().endsWith(".safetensors"))) {
            throw new RuntimeRefused("model " + directory + " has no .safetensors file; the MLX runtime serves MLX (safetensors) weights");
        }
        List<ModelFile> files = new ArrayList<>();
        StringBuilder manifest = new StringBuilder();
        TreeSet<String> subdirectories = new TreeSet<>();
        for (Path path : paths) {
            try {
                String sha256 = NodeRelease.sha256(path);
                files.add(new ModelFile(path, sha256, Files.size(path)));
                String relative = directory.relativize(path).toString();
                manifest.append(relative).append(' ').append(sha256).append('\n');
                Path parent = directory.relativize(path).getParent();
                while (parent != null) {
                    subdirectories.add(parent.toString());
                    parent = parent.getParent();
                }
            } catch (IOException e) {
                throw new RuntimeRefused("cannot read " + path + ": " + e.getMessage());
            }
        }
        return new MlxModel(directory, files, List.copyOf(subdirectories),
                NodeRelease.sha256(manifest.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    /** The wheels of the operator's wheel directory (mlx, mlx-metal, mlx-lm and their dependencies), or none. */
    static List<ModelFile> wheels(Optional<String> directory) {
        if (directory.isEmpty()) {
            return List.of();
        }
        Path path = Path.of(directory.get());
        try (Stream<Path> list = Files.list(path)) {
            List<ModelFile> wheels = new ArrayList<>();
            for (Path wheel : list.filter(file -> file.getFileName().toString().endsWith(".whl")).sorted().toList()) {
                wheels.add(new ModelFile(wheel, NodeRelease.sha256(wheel), Files.size(wheel)));
            }
            if (wheels.isEmpty()) {
                throw new RuntimeRefused("inference.settings.wheels: " + path + " holds no .whl file (pip download mlx==VERSION mlx-lm==VERSION"
                        + " --platform macosx_14_0_arm64 --only-binary=:all: -d DIR makes one)");
            }
            return wheels;
        } catch (IOException e) {
            throw new RuntimeRefused("inference.settings.wheels: cannot read " + path + ": " + e.getMessage());
        }
    }
}
