package io.macfleet.deployment;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The terminal's view of a deployment or placement: each step as a line, and each file's copy as a line per part of
 * it done. Called from several threads (one per Mac), so lines are printed whole. {@code node deploy} shows a file
 * once it is on a Mac ({@link #whenWhole}); {@code model place}, whose files are hundreds of GB, shows quarters.
 */
public final class PrintingListener implements NodeDeployer.Listener {
    private final PrintWriter out;
    private final int parts;
    private final Map<String, Integer> shown = new ConcurrentHashMap<>();

    private PrintingListener(PrintWriter out, int parts) {
        this.out = out;
        this.parts = parts;
    }

    /** One line per file when it is whole on a Mac: {@code studio-01 model.gguf (2.0 GiB)}. */
    public static PrintingListener whenWhole(PrintWriter out) {
        return new PrintingListener(out, 1);
    }

    /** A line at every {@code 1/parts} of each file: {@code studio-01 model.gguf 25% of 2.0 GiB}. */
    public static PrintingListener inParts(PrintWriter out, int parts) {
        if (parts < 2 || parts > 100) {
            throw new IllegalArgumentException("parts must be 2 to 100, was " + parts);
        }
        return new PrintingListener(out, parts);
    }

    @Override
    public void copying(String machine, String file, long done, long total) {
        int part = total == 0 ? parts : (int) (Math.min(done, total) * parts / total);
        Integer previous = shown.put(machine + "/" + file, part);
        if (part == 0 || previous != null && previous == part || parts == 1 && part != parts) {
            return;
        }
        synchronized (out) {
            if (parts == 1) {
                out.printf(Locale.ROOT, "  %-12s %s (%s)%n", machine, file, DiskFree.human(total));
            } else {
                out.printf(Locale.ROOT, "  %-12s %s %d%% of %s%n", machine, file, part * 100 / parts, DiskFree.human(total));
            }
            out.flush();
        }
    }

    @Override
    public void step(String machine, String what) {
        printStep(out, machine, what);
    }

    /** A step as every progress view of macfleet prints it, whole even when several Macs' threads print at once. */
    public static void printStep(PrintWriter out, String machine, String what) {
        synchronized (out) {
            out.println("  " + machine + ": " + what);
            out.flush();
        }
    }
}
