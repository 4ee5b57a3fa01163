package io.macfleet.models;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The metadata of a GGUF file's header (ggml's docs/gguf.md: magic {@code GGUF}, version, tensor count, key-value
 * count, then typed key-values, all little-endian). Only scalar and string values are kept; arrays (the tokenizer's
 * vocabulary) are skipped. {@code NodeRelease} checks only the magic; the catalogue needs the architecture, the
 * quantization ({@code general.file_type}) and the attention shape for the memory fit.
 */
public record GgufHeader(int version, Map<String, Object> metadata) {

    /** Bounds that keep a hostile header from making us allocate or loop without end. */
    private static final int MAXIMUM_STRING_BYTES = 1 << 20;
    private static final long MAXIMUM_KEYS = 1 << 20;

    /**
     * llama.cpp's {@code llama_ftype} numbers (include/llama.h) by the name llama-quantize prints. A number missing here
     * is shown as {@code file_type N}.
     */
    private static final Map<Integer, String> FILE_TYPES = Map.ofEntries(
            Map.entry(0, "F32"), Map.entry(1, "F16"), Map.entry(2, "Q4_0"), Map.entry(3, "Q4_1"), Map.entry(7, "Q8_0"),
            Map.entry(8, "Q5_0"), Map.entry(9, "Q5_1"), Map.entry(10, "Q2_K"), Map.entry(11, "Q3_K_S"), Map.entry(12, "Q3_K_M"),
            Map.entry(13, "Q3_K_L"), Map.entry(14, "Q4_K_S"), Map.entry(15, "Q4_K_M"), Map.entry(16, "Q5_K_S"), Map.entry(17, "Q5_K_M"),
            Map.entry(18, "Q6_K"), Map.entry(19, "IQ2_XXS"), Map.entry(20, "IQ2_XS"), Map.entry(21, "Q2_K_S"), Map.entry(22, "IQ3_XS"),
            Map.entry(23, "IQ3_XXS"), Map.entry(24, "IQ1_S"), Map.entry(25, "IQ4_NL"), Map.entry(26, "IQ3_S"), Map.entry(27, "IQ3_M"),
            Map.entry(28, "IQ2_S"), Map.entry(29, "IQ2_M"), Map.entry(30, "IQ4_XS"), Map.entry(31, "IQ1_M"), Map.entry(32, "BF16"),
            Map.entry(36, "TQ1_0"), Map.entry(37, "TQ2_0"));

    public GgufHeader {
        metadata = Map.copyOf(metadata);
    }

    /** True when the file starts with the GGUF magic. */
    public static boolean isGguf(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] magic = in.readNBytes(4);
            return new String(magic, StandardCharsets.US_ASCII).equals("GGUF");
        } catch (IOException e) {
            return false;
        }
    }

    /** Reads the header, or throws naming the file and what is wrong with it. */
    public static GgufHeader read(Path file) throws IOException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            byte[] magic = in.readNBytes(4);
            if (!new String(magic, StandardCharsets.US_ASCII).equals("GGUF")) {
                throw new IOException(file + " is not a GGUF model (its first bytes are not the GGUF magic)");
            }
            int version = Integer.reverseBytes(in.readInt());
            if (version < 2) {
                throw new IOException(file + " is GGUF version " + version + "; version 2 or later is read");
            }
            Long.reverseBytes(in.readLong()); // tensor count: not needed
            long keys = Long.reverseBytes(in.readLong());
            if (keys < 0 || keys > MAXIMUM_KEYS) {
                throw new IOException(file + ": GGUF header claims " + Long.toUnsignedString(keys) + " metadata keys");
            }
            Map<String, Object> metadata = new HashMap<>();
            for (long index = 0; index < keys; index++) {
                String key = string(in, file);
                int type = Integer.reverseBytes(in.readInt());
                Object value = value(in, type, file);
                if (value != null) {
                    metadata.put(key, value);
                }
            }
            return new GgufHeader(version, metadata);
        } catch (EOFException e) {
            throw new IOException(file + ": the GGUF header ends early (truncated file?)");
        }
    }

    public Optional<String> architecture() {
        return Optional.ofNullable(metadata.get("general.architecture")).map(Object::toString);
    }

    /** llama-quantize's name of {@code general.file_type} ({@code Q4_K_M}), if the header has one. */
    public Optional<String> quantization() {
        return integer("general.file_type").stream().boxed().findFirst()
                .map(type -> FILE_TYPES.getOrDefault(type, "file_type " + type));
    }

    /** An integer value of the architecture's own keys ({@code llama.block_count} for key {@code block_count}). */
    public OptionalInt architectureInteger(String key) {
        return architecture().map(arch -> integer(arch + "." + key)).orElse(OptionalInt.empty());
    }

    public OptionalInt integer(String key) {
        Object value = metadata.get(key);
        return value instanceof Number number ? OptionalInt.of(number.intValue()) : OptionalInt.empty();
    }

    private static String string(DataInputStream in, Path file) throws IOException {
        long length = Long.reverseBytes(in.readLong());
        if (length < 0 || length > MAXIMUM_STRING_BYTES) {
            throw new IOException(file + ": GGUF header has a string of " + Long.toUnsignedString(length) + " bytes");
        }
        return new String(in.readNBytes((int) length), StandardCharsets.UTF_8);
    }

    private static Object value(DataInputStream in, int type, Path file) throws IOException {
        return switch (type) {
            case 0 -> in.readUnsignedByte();
            case 1 -> (int) in.readByte();
            case 2 -> Short.toUnsignedInt(Short.reverseBytes(in.readShort()));
            case 3 -> (int) Short.reverseBytes(in.readShort());
            case 4 -> Integer.toUnsignedLong(Integer.reverseBytes(in.readInt()));
            case 5 -> Integer.reverseBytes(in.readInt());
            case 6 -> Float.intBitsToFloat(Integer.reverseBytes(in.readInt()));
            case 7 -> in.readByte() != 0;
            case 8 -> string(in, file);
            case 9 -> {
                int elementType = Integer.reverseBytes(in.readInt());
                long count = Long.reverseBytes(in.readLong());
                if (count < 0) {
                    throw new IOException(file + ": GGUF header has an array of " + Long.toUnsignedString(count) + " elements");
                }
                for (long element = 0; element < count; element++) {
                    value(in, elementType, file);
                }
                yield null;
            }
            case 10, 11 -> Long.reverseBytes(in.readLong());
            case 12 -> Double.longBitsToDouble(Long.reverseBytes(in.readLong()));
            default -> throw new IOException(file + ": GGUF header has a value of unknown type " + type);
        };
    }
}
