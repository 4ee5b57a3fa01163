import io.macfleet.node.generator.Quantizer;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.kernel.*;
import java.io.*;
import java.lang.foreign.MemorySegment;
import java.nio.*;
import java.nio.file.*;
import java.util.Random;
/**
 * The node's side of ggml-order-check.sh (run by hand): 64 rows of 1024 Q4_K, Q5_K and Q6_K weights and one activation
 * row, written to DIR/case-TYPE.bin for ggml_dots.c; prints the bits of the node's dot products on the activations
 * rounded as ActivationRounding.Q8_K rounds them (run with -Dinference.ggmlOrder=true for GgmlOrderKernels).
 */
public class NodeDots {
    public static void main(String[] a) throws Exception {
        int n = 1024, rows = 64;
        for (GgmlType type : new GgmlType[] {GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K}) {
            Random random = new Random(5);
            float[] w = new float[n * rows];
            for (int i = 0; i < w.length; i++) w[i] = (float) (random.nextGaussian() * (1 + (i / 32) % 5) + ((i / 32) % 3 == 0 ? 0.7 : 0));
            float[] x = new float[n];
            for (int i = 0; i < n; i++) x[i] = (float) (random.nextGaussian() * 3);
            long rowBytes = type.bytesFor(n);
            byte[] bytes = new byte[(int) (rowBytes * rows)];
            for (int r = 0; r < rows; r++) Quantizer.encode(type, w, r * n, n, bytes, (int) (r * rowBytes));
            WeightMatrix m = new WeightMatrix("t", type, MemorySegment.ofArray(bytes), rows, n, rowBytes);
            float[] rounded = new float[n];
            ActivationRounding.Q8_K.round(x, 0, n, rounded, 0);
            ByteBuffer out = ByteBuffer.allocate(12 + bytes.length + 4 * n).order(ByteOrder.LITTLE_ENDIAN);
            out.putInt(n).putInt(rows).putInt((int) rowBytes).put(bytes);
            for (float v : x) out.putFloat(v);
            Files.write(Path.of(a[0], "case-" + type + ".bin"), out.array());
            StringBuilder s = new StringBuilder(type + "");
            for (int r = 0; r < rows; r++) s.append(' ').append(Integer.toHexString(Float.floatToRawIntBits(Kernels.dot(m, r, rounded, 0))));
            System.out.println(s);
        }
    }
}
