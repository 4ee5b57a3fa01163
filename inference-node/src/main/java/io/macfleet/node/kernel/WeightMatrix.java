package io.macfleet.node.kernel;

import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFormatException;
import io.macfleet.node.gguf.TensorInfo;

import java.lang.foreign.MemorySegment;

/**
 * A row-major weight matrix over memory-mapped (or any off-heap) data: {@code rows} outputs of {@code columns}
 * inputs each, rows {@code rowStride} bytes apart. Row and column slices are views, which is what tensor
 * parallelism needs: attention heads and FFN units are row slices of Q/K/V/gate/up, and the matching inputs of
 * the output and down projections are column slices (on block boundaries for quantized types).
 */
public record WeightMatrix(String name, GgmlType type, MemorySegment data, int rows, int columns, long rowStride) {

    public static WeightMatrix of(TensorInfo tensor) {
        if (!QuantizationTypes.supports(tensor.type())) {
            throw new GgufFormatException("tensor '" + tensor.name() + "' has type " + tensor.type()
                    + " (ggml type id " + tensor.type().id() + "), which the engine does not support"
                    + " (supported: " + String.join(", ", QuantizationTypes.supported().stream().map(Enum::name).toList()) + ")");
        }
        long[] dimensions = tensor.dimensions();
        long rows = 1;
        for (int i = 1; i < dimensions.length; i++) {
            rows *= dimensions[i];
        }
        if (rows > Integer.MAX_VALUE || dimensions[0] > Integer.MAX_VALUE) {
            throw new GgufFormatException("tensor '" + tensor.name() + "' shape " + tensor.shape() + " is too large");
        }
        return new WeightMatrix(tensor.name(), tensor.type(), tensor.data(), (int) rows, (int) dimensions[0],
                tensor.type().bytesFor(dimensions[0]));
    }

    public WeightMatrix rowSlice(int firstRow, int rowCount) {
        if (firstRow < 0 || rowCount < 0 || firstRow + rowCount > rows) {
            throw new IllegalArgumentException(name + ": rows " + firstRow + "+" + rowCount + " outside 0.." + rows);
        }
        return new WeightMatrix(name, type, data.asSlice(firstRow * rowStride), rowCount, columns, rowStride);
    }

    public WeightMatrix columnSlice(int firstColumn, int columnCount) {
        if (firstColumn < 0 || columnCount < 0 || firstColumn + columnCount > columns
                || firstColumn % type.blockSize() != 0 || columnCount % type.blockSize() != 0) {
            throw new IllegalArgumentException(name + ": columns " + firstColumn + "+" + columnCount
                    + " outside 0.." + columns + " or not on " + type + " block boundaries");
        }
        return new WeightMatrix(name, type, data.asSlice(type.bytesFor(firstColumn)), rows, columnCount, rowStride);
    }

    /** Bytes of weights this matrix reads in one matrix-vector product. */
    public long byteSize() {
        return rows * type.bytesFor(columns);
    }

    long rowOffset(int row) {
        return row * rowStride;
    }
}
