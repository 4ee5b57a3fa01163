package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The one progress printer of node deploy and model place: a line per part reached, each part once, per Mac and file. */
class PrintingListenerTest {

    @Test
    void inPartsPrintsEachQuarterOncePerMacAndFile() {
        StringWriter text = new StringWriter();
        PrintingListener listener = PrintingListener.inParts(new PrintWriter(text), 4);
        long total = 4L << 30;
        for (long done : new long[] {0, 1L << 20, 1L << 30, (1L << 30) + 5, 3L << 30, total, total}) {
            listener.copying("studio-01", "m.gguf", done, total);
        }
        listener.copying("studio-02", "m.gguf", total / 2, total);
        listener.step("studio-01", "verified");

        assertThat(text.toString().lines()).containsExactly(
                "  studio-01    m.gguf 25% of 4.0 GiB",
                "  studio-01    m.gguf 75% of 4.0 GiB",
                "  studio-01    m.gguf 100% of 4.0 GiB",
                "  studio-02    m.gguf 50% of 4.0 GiB",
                "  studio-01: verified");
    }

    @Test
    void whenWholePrintsAFileOnceWhenItIsOnTheMac() {
        StringWriter text = new StringWriter();
        PrintingListener listener = PrintingListener.whenWhole(new PrintWriter(text));
        listener.copying("studio-01", "node.jar", 10, 100);
        listener.copying("studio-01", "node.jar", 99, 100);
        listener.copying("studio-01", "node.jar", 100, 100);
        listener.copying("studio-01", "node.jar", 100, 100);
        listener.copying("studio-01", "empty", 0, 0);

        assertThat(text.toString().lines()).containsExactly("  studio-01    node.jar (100 bytes)", "  studio-01    empty (0 bytes)");
        assertThatIllegalArgumentException().isThrownBy(() -> PrintingListener.inParts(new PrintWriter(text), 1))
                .withMessage("parts must be 2 to 100, was 1");
    }
}
