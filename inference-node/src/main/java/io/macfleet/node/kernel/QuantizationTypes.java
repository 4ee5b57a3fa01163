package io.macfleet.node.kernel;

import io.macfleet.node.gguf.GgmlType;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The one table of the weight types the engine computes with: each ggml type's row kernels (a dot product with
 * float activations, an exact dequantization), beside its layout ({@link GgmlType}: elements and bytes per block).
 * {@link Kernels#dot} and {@link Kernels#dequantizeRow} dispatch through it, so the matrix-vector and batched
 * products, the embeddings and norms work for any type listed here. A new type is one {@link #register} line plus its
 * two kernels and the activation rounding llama.cpp applies with it; the faster decode paths ({@link Kernels#matvec}'s Q8_0 streams, {@link NibbleKernels} for Q4_0, Q4_K
 * and Q6_K) are optional extras a type may add. Files with other types are refused when their tensors are mapped
 * ({@link WeightMatrix#of}), naming the tensor and the type.
 */
public final class QuantizationTypes {
    /** {@code row · x[offset .. offset + n)} for the row whose first block is at {@code data[base]}. */
    @FunctionalInterface
    public interface RowDot {
        float dot(MemorySegment data, long base, float[] x, int offset, int n);
    }

    /** The row's {@code n} values into {@code out[offset ..]}, bit for bit as ggml's reference dequantization. */
    @FunctionalInterface
    public interface RowDequantizer {
        void dequantize(MemorySegment data, long base, int n, float[] out, int offset);
    }

    /**
     * One type's kernels, and how llama.cpp rounds the activations it multiplies with this type
     * ({@link ActivationRounding}: the type's {@code vec_dot_type} in ggml-cpu).
     */
    public record RowKernels(GgmlType type, RowDot dot, RowDequantizer dequantize, ActivationRounding activations) {
    }

    private static final RowKernels[] BY_TYPE = new RowKernels[GgmlType.values().length];

    static {
        register(GgmlType.F32, GgmlOrderKernels.ENABLED ? GgmlOrderKernels::dotF32 : Kernels::dotF32, Kernels::dequantizeF32, ActivationRounding.NONE);
        register(GgmlType.F16, Kernels::dotF16, Kernels::dequantizeF16, ActivationRounding.F16);
        register(GgmlType.BF16, Kernels::dotBF16, Kernels::dequantizeBF16, ActivationRounding.BF16);
        register(GgmlType.Q8_0, GgmlOrderKernels.ENABLED ? GgmlOrderKernels::dotQ8_0 : Kernels::dotQ8, Kernels::dequantizeQ8, ActivationRounding.Q8_0);
        register(GgmlType.Q4_0, Kernels::dotQ4, Kernels::dequantizeQ4, ActivationRounding.Q8_0);
        register(GgmlType.Q4_K, GgmlOrderKernels.ENABLED ? GgmlOrderKernels::dotQ4K : KQuantKernels::dotQ4K, KQuantKernels::dequantizeQ4K, ActivationRounding.Q8_K);
        register(GgmlType.Q5_K, GgmlOrderKernels.ENABLED ? GgmlOrderKernels::dotQ5K : KQuantKernels::dotQ5K, KQuantKernels::dequantizeQ5K, ActivationRounding.Q8_K);
        register(GgmlType.Q6_K, GgmlOrderKernels.ENABLED ? GgmlOrderKernels::dotQ6K : KQuantKernels::dotQ6K, KQuantKernels::dequantizeQ6K, ActivationRounding.Q8_K);
    }

    private QuantizationTypes() {
    }

    private static void register(GgmlType type, RowDot dot, RowDequantizer dequantize, ActivationRounding activations) {
        BY_TYPE[type.ordinal()] = new RowKernels(type, dot, dequantize, activations);
    }

    /** Whether the engine computes with {@code type}. */
    public static boolean supports(GgmlType type) {
        return BY_TYPE[type.ordinal()] != null;
    }

    /** The supported types, in ggml id order. */
    public static List<GgmlType> supported() {
        List<GgmlType> types = new ArrayList<>();
        for (RowKernels kernels : BY_TYPE) {
            if (kernels != null) {
                types.add(kernels.type());
            }
        }
        return types;
    }

    /** The kernels of {@code type}; an unsupported type here is a bug (files with one are refused at load). */
    public static RowKernels of(GgmlType type) {
        RowKernels kernels = BY_TYPE[type.ordinal()];
        if (kernels == null) {
            throw new IllegalStateException("unsupported type " + type);
        }
        return kernels;
    }
}
