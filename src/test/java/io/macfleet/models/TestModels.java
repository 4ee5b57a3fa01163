package io.macfleet.models;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * Small model files for the catalogue's tests: a GGUF header as ggml's docs/gguf.md lays it out (the keys
 * llama.cpp's llama-arch.cpp reads for a llama model, a tokenizer array the reader must skip) followed by seeded bytes
 * standing in for the tensors, and MLX directories as mlx_lm.convert writes them (config.json, the safetensors
 * index's weight_map, shards). The real GGUF of the bundled node's make-model is read in ModelCliTest.
 */
final class TestModels {

    private TestModels() {
    }

    static Path gguf(Path file, int fileType, int payloadBytes, long seed) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes("GGUF".getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(uint32(3));
        out.writeBytes(uint64(0));
        out.writeBytes(uint64(8));
        keyString(out, "general.architecture", "llama");
        keyUint32(out, "general.file_type", fileType);
        keyUint32(out, "llama.block_count", 32);
        keyUint32(out, "llama.attention.head_count", 32);
        keyUint32(out, "llama.attention.head_count_kv", 8);
        keyUint32(out, "llama.embedding_length", 4096);
        keyUint32(out, "llama.context_length", 8192);
        // tokenizer.ggml.tokens: an array of strings, skipped by the reader
        out.writeBytes(string("tokenizer.ggml.tokens"));
        out.writeBytes(uint32(9));
        out.writeBytes(uint32(8));
        out.writeBytes(uint64(3));
        for (String token : new String[] {"<s>", "</s>", "hello"}) {
            out.writeBytes(string(token));
        }
        byte[] payload = new byte[payloadBytes];
        new Random(seed).nextBytes(payload);
        out.writeBytes(payload);
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.write(file, out.toByteArray());
        return file;
    }

    static Path mlx(Path directory, int shards, boolean withIndex) throws IOException {
        Files.createDirectories(directory);
        Files.writeString(directory.resolve("config.json"), """
                {"model_type": "qwen3", "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
                 "hidden_size": 2048, "head_dim": 128, "max_position_embeddings": 40960,
                 "quantization": {"group_size": 64, "bits": 4}}
                """);
        Files.writeString(directory.resolve("tokenizer.json"), "{\"version\": \"1.0\"}");
        StringBuilder weightMap = new StringBuilder();
        for (int shard = 1; shard <= shards; shard++) {
            String name = String.format("model-%05d-of-%05d.safetensors", shard, shards);
            byte[] bytes = new byte[1000 + shard];
            new Random(shard).nextBytes(bytes);
            Files.write(directory.resolve(name), bytes);
            weightMap.append(shard == 1 ? "" : ",").append("\"layer").append(shard).append(".weight\": \"").append(name).append('"');
        }
        if (withIndex) {
            Files.writeString(directory.resolve("model.safetensors.index.json"), "{\"metadata\": {}, \"weight_map\": {" + weightMap + "}}");
        }
        return directory;
    }

    private static void keyString(ByteArrayOutputStream out, String key, String value) {
        out.writeBytes(string(key));
        out.writeBytes(uint32(8));
        out.writeBytes(string(value));
    }

    private static void keyUint32(ByteArrayOutputStream out, String key, int value) {
        out.writeBytes(string(key));
        out.writeBytes(uint32(4));
        out.writeBytes(uint32(value));
    }

    private static byte[] string(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(8 + bytes.length).order(ByteOrder.LITTLE_ENDIAN).putLong(bytes.length).put(bytes).array();
    }

    private static byte[] uint32(int value) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
    }

    private static byte[] uint64(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
    }
}
