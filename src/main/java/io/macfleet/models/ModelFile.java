package io.macfleet.models;

/**
 * One file of a catalogue model: its path relative to the model's root (a single GGUF is one file; split GGUF parts
 * or an MLX directory are several), its size in bytes and its SHA-256 (lower-case hex).
 */
public record ModelFile(String path, long size, String sha256) {
}
