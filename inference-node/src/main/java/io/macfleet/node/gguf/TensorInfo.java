package io.macfleet.node.gguf;

import java.lang.foreign.MemorySegment;

/**
 * One tensor of a GGUF file. {@code dimensions[0]} is the innermost (contiguous) dimension, as in ggml:
 * a weight matrix has {@code dimensions[0]} columns (input size) and {@code dimensions[1]} rows (output size).
 * {@code data} is a view into the memory-mapped file, never a copy.
 */
public record TensorInfo(String name, long[] dimensions, GgmlType type, long offset, MemorySegment data) {
    public long elementCount() {
        long count = 1;
        for (long dimension : dimensions) {
            count *= dimension;
        }
        return count;
    }

    public long byteSize() {
        return type.bytesFor(elementCount());
    }

    public String shape() {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < dimensions.length; i++) {
            text.append(i == 0 ? "" : ", ").append(dimensions[i]);
        }
        return text.append(']').toString();
    }
}
