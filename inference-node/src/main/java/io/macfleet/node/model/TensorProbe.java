package io.macfleet.node.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Diagnostic, off unless {@code -Dinference.probe=DIR}: writes intermediate tensors as {@code DIR/tNN-NAME.bin}, named
 * as llama.cpp's graph names them ({@code l_out-3}) and laid out as inference-node/tools/ggml-parity/llama_dump.cpp
 * writes llama.cpp's (four int64 dimensions, then little-endian floats), so that ggml-parity.sh can compare the two
 * layer by layer. One process, one model: NN counts forward batches, as llama_dump counts decode calls.
 */
final class TensorProbe {
    static final Path DIRECTORY = System.getProperty("inference.probe") == null ? null : Path.of(System.getProperty("inference.probe"));
    /** The forward batch being written (the prompt is 0, each decode step one more). */
    static int step;

    private TensorProbe() {
    }

    /** {@code name-layer}: the name is built only when the probe is on (decode calls this per layer and token). */
    static void dump(String name, int layer, float[] data, int offset, int rows, int columns) {
        if (DIRECTORY != null) {
            dump(name + "-" + layer, data, offset, rows, columns);
        }
    }

    static void dump(String name, float[] data, int offset, int rows, int columns) {
        if (DIRECTORY == null) {
            return;
        }
        ByteBuffer buffer = ByteBuffer.allocate(32 + 4 * rows * columns).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(columns).putLong(rows).putLong(1).putLong(1);
        for (int i = 0; i < rows * columns; i++) {
            buffer.putFloat(data[offset + i]);
        }
        try {
            Files.write(DIRECTORY.resolve(String.format("t%02d-%s.bin", step, name)), buffer.array());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
