package io.macfleet.provision;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The console of a run in a test: what the CLI prints, and a keyboard the test types answers on. */
final class ConsoleTranscript {

    private final StringBuffer text = new StringBuffer();
    private final PipedOutputStream keyboard = new PipedOutputStream();
    private final BufferedReader input;
    final PrintWriter out = new PrintWriter(new Writer() {
        @Override
        public void write(char[] buffer, int offset, int length) {
            synchronized (text) {
                text.append(buffer, offset, length);
                text.notifyAll();
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }, true);

    ConsoleTranscript() throws IOException {
        input = new BufferedReader(new InputStreamReader(new PipedInputStream(keyboard, 64 * 1024), StandardCharsets.UTF_8));
    }

    BufferedReader input() {
        return input;
    }

    String text() {
        return text.toString();
    }

    /** Waits until the text from {@code from} on matches, and returns the match. */
    Matcher await(Pattern pattern, int from, Duration timeout) throws InterruptedException {
        return await(pattern, from, timeout, null);
    }

    /** As above; when {@code run} ends first (normally or not) the test fails with what it printed or threw. */
    Matcher await(Pattern pattern, int from, Duration timeout, java.util.concurrent.CompletableFuture<?> run) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (text) {
            while (true) {
                Matcher matcher = pattern.matcher(text.substring(Math.min(from, text.length())));
                if (matcher.find()) {
                    return matcher;
                }
                if (run != null && run.isDone()) {
                    Object result;
                    try {
                        result = run.join();
                    } catch (RuntimeException e) {
                        throw new AssertionError("the run ended with " + e + " before " + pattern + " appeared:\n" + text, e);
                    }
                    throw new AssertionError("the run ended (" + result + ") before " + pattern + " appeared:\n" + text);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("no " + pattern + " in the console within " + timeout + ":\n" + text);
                }
                text.wait(Math.max(1, Math.min(200, left / 1_000_000)));
            }
        }
    }

    void type(String line) throws IOException {
        keyboard.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        keyboard.flush();
    }

    void closeKeyboard() throws IOException {
        keyboard.close();
    }
}
