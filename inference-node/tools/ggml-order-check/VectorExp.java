import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;

/** ggml-order-check.sh's Java side of the vector exp check: reads "x-bits result-bits" lines, counts differences. */
public class VectorExp {
    public static void main(String[] args) throws Exception {
        Method exp = Class.forName("io.macfleet.node.kernel.GgmlOrderKernels").getDeclaredMethod("vectorExp", float.class);
        exp.setAccessible(true);
        int differ = 0, values = 0;
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            String[] bits = line.split(" ");
            float x = Float.intBitsToFloat((int) Long.parseLong(bits[0], 16));
            float node = (float) exp.invoke(null, x);
            values++;
            differ += Float.floatToRawIntBits(node) != (int) Long.parseLong(bits[1], 16) ? 1 : 0;
        }
        System.out.printf("vectorExp: %d of %d values differ from ggml_v_expf%n", differ, values);
    }
}
