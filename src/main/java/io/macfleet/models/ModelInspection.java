package io.macfleet.models;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a set of files under a root is, as a model: GGUF (one file, or split parts {@code NAME-00001-of-00003.gguf},
 * all present) or MLX (config.json, and every shard model.safetensors.index.json names, or at least one
 * .safetensors). Anything else is refused with a message naming the file.
 *
 * @param weights the file the runtimes are given: the GGUF (its first part when split), or {@code null} for an MLX
 *                directory (the runtime takes the directory)
 */
public record ModelInspection(String format, String architecture, String quantization, ModelShape shape, List<String> runtimes,
                              String weights) {

    public static final String GGUF = "gguf";
    public static final String MLX = "mlx";
    /** Runtimes by format: the bundled node and llama.cpp read GGUF; mlx_lm reads MLX safetensors. */
    public static final List<String> GGUF_RUNTIMES = List.of("bundled", "llama.cpp");
    public static final List<String> MLX_RUNTIMES = List.of("mlx");

    /** llama.cpp's gguf-split names: {@code PREFIX-00001-of-00003.gguf}. */
    static final Pattern SPLIT = Pattern.compile("(.*)-(\\d{5})-of-(\\d{5})\\.gguf");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Inspects {@code files} (relative to {@code root}, all present). */
    public static ModelInspection of(Path root, List<String> files) {
        List<String> ggufs = files.stream().filter(file -> file.endsWith(".gguf")).sorted().toList();
        if (files.contains("config.json") && ggufs.isEmpty()) {
            return mlx(root, files);
        }
        if (ggufs.isEmpty()) {
            throw new ModelRefused("not a model: " + (files.isEmpty() ? root.toString() : root.resolve(files.getFirst()).toString())
                    + (files.size() > 1 ? " (and " + (files.size() - 1) + " more)" : "")
                    + " holds neither a GGUF file nor an MLX config.json");
        }
        return gguf(root, ggufs);
    }

    private static ModelInspection gguf(Path root, List<String> ggufs) {
        String first = ggufs.getFirst();
        Matcher split = SPLIT.matcher(first);
        if (ggufs.size() > 1) {
            if (!split.matches()) {
                throw new ModelRefused("more than one GGUF model: " + String.join(", ", ggufs) + "; add one model (or the parts of one split"
                        + " model) at a time, e.g. with --include");
            }
            int count = Integer.parseInt(split.group(3));
            TreeSet<String> expected = new TreeSet<>();
            for (int part = 1; part <= count; part++) {
                expected.add(String.format(java.util.Locale.ROOT, "%s-%05d-of-%05d.gguf", split.group(1), part, count));
            }
            if (!expected.equals(new TreeSet<>(ggufs))) {
                TreeSet<String> missing = new TreeSet<>(expected);
                missing.removeAll(ggufs);
                TreeSet<String> extra = new TreeSet<>(ggufs);
                extra.removeAll(expected);
                throw new ModelRefused("split GGUF " + root.resolve(first) + ": " + (missing.isEmpty() ? "" : "missing parts " + missing)
                        + (extra.isEmpty() ? "" : (missing.isEmpty() ? "" : "; ") + "files of another model " + extra));
            }
        }
        for (String file : ggufs) {
            if (!GgufHeader.isGguf(root.resolve(file))) {
                throw new ModelRefused("not a model: " + root.resolve(file) + " does not start with the GGUF magic");
            }
        }
        GgufHeader header;
        try {
            header = GgufHeader.read(root.resolve(first));
        } catch (IOException e) {
            throw new ModelRefused("not a readable GGUF model: " + e.getMessage());
        }
        int heads = header.architectureInteger("attention.head_count").orElse(0);
        int embedding = header.architectureInteger("embedding_length").orElse(0);
        int keyLength = header.architectureInteger("attention.key_length").orElse(heads > 0 ? embedding / heads : 0);
        ModelShape shape = new ModelShape(header.architectureInteger("block_count").orElse(0),
                header.architectureInteger("attention.head_count_kv").orElse(heads), keyLength,
                header.architectureInteger("context_length").orElse(0));
        return new ModelInspection(GGUF, header.architecture().orElse("unknown"), header.quantization().orElse("unknown"), shape,
                GGUF_RUNTIMES, first);
    }

    private static ModelInspection mlx(Path root, List<String> files) {
        JsonNode config;
        try {
            config = JSON.readTree(root.resolve("config.json").toFile());
        } catch (IOException e) {
            throw new ModelRefused("not a model: " + root.resolve("config.json") + " is not JSON (" + (e instanceof com.fasterxml.jackson.core.JsonProcessingException json ? json.getOriginalMessage() : e.getMessage()) + ")");
        }
        if (!config.isObject() || !config.path("model_type").isTextual()) {
            throw new ModelRefused("not an MLX model: " + root.resolve("config.json") + " has no model_type");
        }
        if (files.contains("model.safetensors.index.json")) {
            TreeSet<String> shards = new TreeSet<>();
            try {
                JSON.readTree(root.resolve("model.safetensors.index.json").toFile()).path("weight_map")
                        .forEach(shard -> shards.add(shard.asText()));
            } catch (IOException e) {
                throw new ModelRefused("not a readable MLX model: " + root.resolve("model.safetensors.index.json") + " is not JSON");
            }
            shards.removeAll(files);
            if (!shards.isEmpty()) {
                throw new ModelRefused("MLX model " + root + " is missing " + shards.size() + " shard(s) model.safetensors.index.json names: "
                        + String.join(", ", shards.stream().limit(10).toList()));
            }
        } else if (files.stream().noneMatch(file -> file.endsWith(".safetensors"))) {
            throw new ModelRefused("not an MLX model: " + root + " has config.json but no .safetensors file");
        }
        JsonNode text = config.has("text_config") && !config.has("num_hidden_layers") ? config.path("text_config") : config;
        int heads = text.path("num_attention_heads").asInt(0);
        int hidden = text.path("hidden_size").asInt(0);
        int headDimension = text.path("head_dim").asInt(heads > 0 ? hidden / heads : 0);
        ModelShape shape = new ModelShape(text.path("num_hidden_layers").asInt(0), text.path("num_key_value_heads").asInt(heads),
                headDimension, text.path("max_position_embeddings").asInt(0));
        JsonNode quantization = config.has("quantization") ? config.path("quantization") : config.path("quantization_config");
        String quantized = quantization.path("bits").isInt() ? quantization.path("bits").asInt() + "-bit"
                : config.path("torch_dtype").asText(config.path("dtype").asText("unknown"));
        return new ModelInspection(MLX, config.path("model_type").asText(), quantized, shape, MLX_RUNTIMES, null);
    }
}
