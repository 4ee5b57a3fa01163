package io.macfleet.node.gguf;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Writes GGUF version 3 files: header, metadata, tensor infos, padding to the alignment, then tensor data in
 * order, each tensor starting at a multiple of the alignment. Tensor data is produced straight into the
 * memory-mapped output, so multi-gigabyte files never pass through the heap.
 */
public final class GgufWriter {
    private record Entry(String key, GgufValueType type, Object value, GgufValueType elementType) {
    }

    private record PendingTensor(String name, GgmlType type, long[] dimensions, Consumer<MemorySegment> filler) {
    }

    private final List<Entry> entries = new ArrayList<>();
    private final List<PendingTensor> tensors = new ArrayList<>();
    private final int alignment = 32;

    /** Drops a metadata key put before (tests write files with a key changed or missing). */
    public GgufWriter remove(String key) {
        entries.removeIf(entry -> entry.key().equals(key));
        return this;
    }

    public GgufWriter putString(String key, String value) {
        entries.add(new Entry(key, GgufValueType.STRING, value, null));
        return this;
    }

    public GgufWriter putUInt32(String key, long value) {
        entries.add(new Entry(key, GgufValueType.UINT32, value, null));
        return this;
    }

    public GgufWriter putFloat32(String key, double value) {
        entries.add(new Entry(key, GgufValueType.FLOAT32, value, null));
        return this;
    }

    public GgufWriter putBool(String key, boolean value) {
        entries.add(new Entry(key, GgufValueType.BOOL, value, null));
        return this;
    }

    /** An array value; elements must match {@code elementType} (String, Number or Boolean). */
    public GgufWriter putArray(String key, GgufValueType elementType, List<?> values) {
        entries.add(new Entry(key, GgufValueType.ARRAY, values, elementType));
        return this;
    }

    /** Adds a tensor; {@code filler} receives the tensor's slice of the output file and must fill all of it. */
    public GgufWriter addTensor(String name, GgmlType type, long[] dimensions, Consumer<MemorySegment> filler) {
        if (dimensions[0] % type.blockSize() != 0) {
            throw new IllegalArgumentException(name + ": row length " + dimensions[0] + " is not a multiple of "
                    + type.blockSize() + " for " + type);
        }
        tensors.add(new PendingTensor(name, type, dimensions.clone(), filler));
        return this;
    }

    public void write(Path path) throws IOException {
        Header header = new Header();
        header.putInt(GgufFile.MAGIC);
        header.putInt(3);
        header.putLong(tensors.size());
        header.putLong(entries.size());
        for (Entry entry : entries) {
            header.putString(entry.key);
            header.putInt(entry.type.ordinal());
            header.putValue(entry.type, entry.value, entry.elementType);
        }
        long offset = 0;
        long[] offsets = new long[tensors.size()];
        for (int i = 0; i < tensors.size(); i++) {
            PendingTensor tensor = tensors.get(i);
            header.putString(tensor.name);
            header.putInt(tensor.dimensions.length);
            for (long dimension : tensor.dimensions) {
                header.putLong(dimension);
            }
            header.putInt(tensor.type.id());
            offsets[i] = offset;
            header.putLong(offset);
            offset = align(offset + size(tensor));
        }
        byte[] headerBytes = header.bytes();
        long dataStart = align(headerBytes.length);
        long total = tensors.isEmpty() ? dataStart : dataStart + offsets[offsets.length - 1] + size(tensors.getLast());
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofShared()) {
            MemorySegment out = channel.map(FileChannel.MapMode.READ_WRITE, 0, total, arena);
            MemorySegment.copy(MemorySegment.ofArray(headerBytes), 0, out, 0, headerBytes.length);
            for (int i = 0; i < tensors.size(); i++) {
                PendingTensor tensor = tensors.get(i);
                tensor.filler.accept(out.asSlice(dataStart + offsets[i], size(tensor)));
            }
            out.force();
        }
    }

    private long align(long value) {
        return (value + alignment - 1) / alignment * alignment;
    }

    private static long size(PendingTensor tensor) {
        long elements = 1;
        for (long dimension : tensor.dimensions) {
            elements *= dimension;
        }
        return tensor.type.bytesFor(elements);
    }

    private static final class Header {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);

        void putInt(int value) {
            scratch.clear();
            bytes.write(scratch.putInt(value).array(), 0, 4);
        }

        void putLong(long value) {
            scratch.clear();
            bytes.write(scratch.putLong(value).array(), 0, 8);
        }

        void putString(String value) {
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            putLong(utf8.length);
            bytes.write(utf8, 0, utf8.length);
        }

        void putValue(GgufValueType type, Object value, GgufValueType elementType) {
            switch (type) {
                case UINT8, INT8 -> bytes.write(((Number) value).intValue());
                case UINT16, INT16 -> {
                    scratch.clear();
                    bytes.write(scratch.putShort(((Number) value).shortValue()).array(), 0, 2);
                }
                case UINT32, INT32 -> putInt((int) ((Number) value).longValue());
                case UINT64, INT64 -> putLong(((Number) value).longValue());
                case FLOAT32 -> putInt(Float.floatToRawIntBits(((Number) value).floatValue()));
                case FLOAT64 -> putLong(Double.doubleToRawLongBits(((Number) value).doubleValue()));
                case BOOL -> bytes.write(((Boolean) value) ? 1 : 0);
                case STRING -> putString((String) value);
                case ARRAY -> {
                    List<?> list = (List<?>) value;
                    putInt(elementType.ordinal());
                    putLong(list.size());
                    for (Object element : list) {
                        putValue(elementType, element, null);
                    }
                }
            }
        }

        byte[] bytes() {
            return bytes.toByteArray();
        }
    }
}
