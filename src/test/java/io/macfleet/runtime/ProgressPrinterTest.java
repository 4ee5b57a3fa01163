package io.macfleet.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code macfleet node deploy}'s progress lines never go back: neither a Mac's copy (a copy resumed after a broken
 * connection restarts at its verified prefix, below what it had reported) nor the overall share (Macs report from
 * their own threads).
 */
class ProgressPrinterTest {

    private static final Pattern LINE = Pattern.compile("^\\s+(\\S+)\\s+(\\S+)\\s+\\[#*\\s*\\]\\s+(\\d+)%.*overall\\s+(\\d+)%$");
    private static final long SIZE = 1000;

    @Test
    void aResumedCopyDoesNotShowItsProgressGoingBack() {
        StringWriter text = new StringWriter();
        NodeCommand.ProgressPrinter printer = new NodeCommand.ProgressPrinter(new PrintWriter(text), SIZE);
        printer.copying("studio-01", "model", 0, SIZE);
        printer.copying("studio-01", "model", 580, SIZE);
        // The connection broke; the next attempt resumes from the verified prefix, a margin below.
        printer.copying("studio-01", "model", 410, SIZE);
        printer.copying("studio-01", "model", 700, SIZE);
        printer.copying("studio-01", "model", SIZE, SIZE);

        List<int[]> lines = parse(text.toString());
        assertThat(lines).extracting(line -> line[0]).containsExactly(0, 50, 70, 100);
        assertThat(lines).extracting(line -> line[1]).isSorted();
    }

    @Test
    void theOverallShareOnlyGoesForwardWhileMacsReportAtOnce() throws Exception {
        List<String> machines = List.of("studio-01", "studio-02", "studio-03", "studio-04");
        for (int attempt = 0; attempt < 20; attempt++) {
            StringWriter text = new StringWriter();
            NodeCommand.ProgressPrinter printer = new NodeCommand.ProgressPrinter(new PrintWriter(text), SIZE * machines.size());
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (String machine : machines) {
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (long bytes = 0; bytes <= SIZE; bytes += 10) {
                        printer.copying(machine, "model", bytes, SIZE);
                    }
                }));
            }
            start.countDown();
            for (Thread thread : threads) {
                thread.join();
            }
            List<String> lines = text.toString().lines().toList();
            List<Integer> overall = new ArrayList<>();
            Map<String, List<Integer>> perMac = new HashMap<>();
            for (String line : lines) {
                Matcher matcher = LINE.matcher(line);
                assertThat(matcher.matches()).as(line).isTrue();
                perMac.computeIfAbsent(matcher.group(1), machine -> new ArrayList<>()).add(Integer.parseInt(matcher.group(3)));
                overall.add(Integer.parseInt(matcher.group(4)));
            }
            assertThat(overall).as("overall shares in printed order").isSorted().endsWith(100);
            perMac.values().forEach(shares -> assertThat(shares).isSorted().containsExactly(0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100));
        }
    }

    private static List<int[]> parse(String text) {
        List<int[]> lines = new ArrayList<>();
        for (String line : text.lines().toList()) {
            Matcher matcher = LINE.matcher(line);
            assertThat(matcher.matches()).as(line).isTrue();
            lines.add(new int[] {Integer.parseInt(matcher.group(3)), Integer.parseInt(matcher.group(4))});
        }
        return lines;
    }
}
