package io.macfleet.node.gguf;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file (ggml docs/gguf.md, versions 2 and 3), memory-mapped through the FFM API: the whole file is one
 * {@link MemorySegment} owned by a shared {@link Arena}, so files beyond 2 GB work and tensor data is never copied
 * into the heap. Metadata values are Long (all integer types), Double (floats), Boolean, String or List.
 */
public final class GgufFile implements AutoCloseable {
    public static final int MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final Arena arena;
    private final MemorySegment file;
    private final int version;
    private final Map<String, Object> metadata;
    private final Map<String, TensorInfo> tensors;
    private final long dataOffset;
    private final long alignment;
    private long position;

    private GgufFile(Path path, Arena arena, MemorySegment file) {
        this.path = path;
        this.arena = arena;
        this.file = file;
        if (file.byteSize() < 4 || readInt("magic") != MAGIC) {
            throw error("wrong magic: not a GGUF file (expected bytes 'GGUF' at offset 0)");
        }
        version = readInt("version");
        if (version != 2 && version != 3) {
            throw error("unsupported GGUF version " + version + " (supported: 2, 3)");
        }
        long tensorCount = readLong("tensor count");
        long metadataCount = readLong("metadata count");
        if (tensorCount < 0 || tensorCount > file.byteSize() || metadataCount < 0 || metadataCount > file.byteSize()) {
            throw error("implausible header counts: " + tensorCount + " tensors, " + metadataCount + " metadata entries");
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (long i = 0; i < metadataCount; i++) {
            String key = readString("metadata key #" + i);
            int typeId = readInt("type of metadata '" + key + "'");
            values.put(key, readValue(key, typeId));
        }
        metadata = Collections.unmodifiableMap(values);
        Object alignmentValue = values.getOrDefault("general.alignment", 32L);
        if (!(alignmentValue instanceof Long a) || a <= 0 || (a & (a - 1)) != 0) {
            throw error("metadata 'general.alignment' must be a positive power of two, got " + alignmentValue);
        }
        alignment = (Long) alignmentValue;
        record Pending(String name, long[] dimensions, GgmlType type, long offset) {
        }
        List<Pending> pending = new ArrayList<>();
        for (long i = 0; i < tensorCount; i++) {
            String name = readString("name of tensor #" + i);
            int dimensionCount = readInt("dimension count of tensor '" + name + "'");
            if (dimensionCount < 1 || dimensionCount > 4) {
                throw error("tensor '" + name + "' has " + dimensionCount + " dimensions (1 to 4 allowed)");
            }
            long[] dimensions = new long[dimensionCount];
            for (int d = 0; d < dimensionCount; d++) {
                dimensions[d] = readLong("dimension " + d + " of tensor '" + name + "'");
                if (dimensions[d] <= 0) {
                    throw error("tensor '" + name + "' has non-positive dimension " + dimensions[d]);
                }
            }
            int typeId = readInt("type of tensor '" + name + "'");
            GgmlType type = GgmlType.byId(typeId);
            if (type == null) {
                throw error("tensor '" + name + "' has unknown ggml type id " + typeId);
            }
            long offset = readLong("offset of tensor '" + name + "'");
            if (dimensions[0] % type.blockSize() != 0) {
                throw error("tensor '" + name + "' of type " + type + " (data offset " + offset + ") has row length "
                        + dimensions[0] + ", not a multiple of the block size " + type.blockSize());
            }
            if (offset % alignment != 0) {
                throw error("tensor '" + name + "' offset " + offset + " is not a multiple of the alignment " + alignment);
            }
            pending.add(new Pending(name, dimensions, type, offset));
        }
        dataOffset = (position + alignment - 1) / alignment * alignment;
        Map<String, TensorInfo> infos = new LinkedHashMap<>();
        for (Pending p : pending) {
            long elements = 1;
            for (long dimension : p.dimensions) {
                elements = Math.multiplyExact(elements, dimension);
            }
            long size = p.type.bytesFor(elements);
            long start = dataOffset + p.offset;
            if (start + size > file.byteSize()) {
                throw error("truncated: tensor '" + p.name + "' (" + p.type + ", " + size + " bytes at file offset "
                        + start + ") ends at " + (start + size) + " but the file has " + file.byteSize() + " bytes");
            }
            if (infos.put(p.name, new TensorInfo(p.name, p.dimensions, p.type, p.offset, file.asSlice(start, size))) != null) {
                throw error("duplicate tensor name '" + p.name + "'");
            }
        }
        tensors = Collections.unmodifiableMap(infos);
    }

    /** Opens and maps a GGUF file; throws {@link GgufFormatException} naming the file for any format problem. */
    public static GgufFile open(Path path) throws IOException {
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            MemorySegment segment = channel.map(FileChannel.MapMode.READ_ONLY, 0, Files.size(path), arena);
            return new GgufFile(path, arena, segment);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    public Path path() {
        return path;
    }

    public int version() {
        return version;
    }

    public long alignment() {
        return alignment;
    }

    public long dataOffset() {
        return dataOffset;
    }

    public long fileSize() {
        return file.byteSize();
    }

    public Map<String, Object> metadata() {
        return metadata;
    }

    public Map<String, TensorInfo> tensors() {
        return tensors;
    }

    public TensorInfo tensor(String name) {
        TensorInfo info = tensors.get(name);
        if (info == null) {
            throw error("missing tensor '" + name + "'");
        }
        return info;
    }

    public TensorInfo optionalTensor(String name) {
        return tensors.get(name);
    }

    public String string(String key) {
        return typed(key, String.class, "a string");
    }

    public String string(String key, String fallback) {
        return metadata.containsKey(key) ? string(key) : fallback;
    }

    public long integer(String key) {
        return typed(key, Long.class, "an integer");
    }

    public long integer(String key, long fallback) {
        return metadata.containsKey(key) ? integer(key) : fallback;
    }

    public double number(String key, double fallback) {
        Object value = metadata.get(key);
        if (value == null) {
            return fallback;
        }
        if (value instanceof Number n) {
            return n.doubleValue();
        }
        throw error("metadata '" + key + "' must be a number, got " + describe(value));
    }

    public boolean bool(String key, boolean fallback) {
        return metadata.containsKey(key) ? typed(key, Boolean.class, "a boolean") : fallback;
    }

    @SuppressWarnings("unchecked")
    public List<Object> array(String key) {
        return typed(key, List.class, "an array");
    }

    private <T> T typed(String key, Class<T> type, String what) {
        Object value = metadata.get(key);
        if (value == null) {
            throw error("missing metadata '" + key + "'");
        }
        if (!type.isInstance(value)) {
            throw error("metadata '" + key + "' must be " + what + ", got " + describe(value));
        }
        return type.cast(value);
    }

    private static String describe(Object value) {
        if (value instanceof List<?> list) {
            return "an array of " + list.size();
        }
        return value.getClass().getSimpleName().toLowerCase() + " " + value;
    }

    public GgufFormatException error(String message) {
        return new GgufFormatException(path + ": " + message);
    }

    @Override
    public void close() {
        arena.close();
    }

    private Object readValue(String key, int typeId) {
        GgufValueType type = GgufValueType.byId(typeId);
        if (type == null) {
            throw error("metadata '" + key + "' has unknown value type " + typeId + " at offset " + (position - 4));
        }
        return switch (type) {
            case UINT8 -> (long) (readBytes(1, key)[0] & 0xFF);
            case INT8 -> (long) readBytes(1, key)[0];
            case UINT16 -> (long) (readShort(key) & 0xFFFF);
            case INT16 -> (long) readShort(key);
            case UINT32 -> readInt(key) & 0xFFFFFFFFL;
            case INT32 -> (long) readInt(key);
            case FLOAT32 -> (double) readFloat(key);
            case BOOL -> readBytes(1, key)[0] != 0;
            case STRING -> readString(key);
            case UINT64, INT64 -> readLong(key);
            case FLOAT64 -> readDouble(key);
            case ARRAY -> {
                int elementTypeId = readInt(key);
                long count = readLong(key);
                if (count < 0 || count > file.byteSize() - position) {
                    throw error("metadata '" + key + "' claims " + count + " array elements at offset " + position
                            + ", more than the file holds (truncated?)");
                }
                if (GgufValueType.byId(elementTypeId) == GgufValueType.ARRAY) {
                    throw error("metadata '" + key + "' is a nested array, not supported");
                }
                List<Object> list = new ArrayList<>((int) count);
                for (long i = 0; i < count; i++) {
                    list.add(readValue(key, elementTypeId));
                }
                yield Collections.unmodifiableList(list);
            }
        };
    }

    private void need(long bytes, String what) {
        if (bytes < 0 || position + bytes > file.byteSize()) {
            throw error("truncated: reading " + what + " needs " + bytes + " bytes at offset " + position
                    + " but the file has " + file.byteSize() + " bytes");
        }
    }

    private int readInt(String what) {
        need(4, what);
        int value = file.get(INT, position);
        position += 4;
        return value;
    }

    private short readShort(String what) {
        need(2, what);
        short value = file.get(SHORT, position);
        position += 2;
        return value;
    }

    private long readLong(String what) {
        need(8, what);
        long value = file.get(LONG, position);
        position += 8;
        return value;
    }

    private float readFloat(String what) {
        need(4, what);
        float value = file.get(FLOAT, position);
        position += 4;
        return value;
    }

    private double readDouble(String what) {
        need(8, what);
        double value = file.get(DOUBLE, position);
        position += 8;
        return value;
    }

    private byte[] readBytes(int count, String what) {
        need(count, what);
        byte[] bytes = file.asSlice(position, count).toArray(ValueLayout.JAVA_BYTE);
        position += count;
        return bytes;
    }

    private String readString(String what) {
        long length = readLong(what);
        if (length < 0 || length > Integer.MAX_VALUE) {
            throw error("string length " + length + " for " + what + " at offset " + (position - 8) + " is invalid");
        }
        return new String(readBytes((int) length, what), StandardCharsets.UTF_8);
    }
}
