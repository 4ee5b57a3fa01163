package io.macfleet.provision;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * How `macfleet provision` shows a run: on a terminal, one live line per machine (current step and elapsed
 * time) redrawn every second; otherwise plain lines as steps finish. Operator steps are asked on the console
 * (standard input, a pipe works too) unless non-interactive, where they are left waiting for a person.
 */
public final class ConsoleListener implements ProvisioningListener {

    private static final String NO_INPUT = "\u0000end-of-input";

    private record Line(String step, long startedNanos, String note) {
    }

    private final PrintWriter out;
    private final BufferedReader in;
    private final boolean live;
    private final boolean interactive;
    private final String actor;
    private final Map<String, Line> lines = new LinkedHashMap<>();
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private int drawn;
    private Thread ticker;
    private Thread reader;
    private boolean prompting;
    private String promptLine = "";

    public ConsoleListener(PrintWriter out, BufferedReader in, boolean live, boolean interactive, String actor) {
        this.out = out;
        this.in = in;
        this.live = live;
        this.interactive = interactive;
        this.actor = actor;
    }

    /** A terminal that understands cursor movement: a console, and TERM not dumb. */
    public static boolean liveTerminal() {
        String term = System.getenv("TERM");
        return System.console() != null && term != null && !term.equals("dumb");
    }

    @Override
    public synchronized void runStarted(long runId, boolean resumed, String playbook, java.util.List<String> machines) {
        out.println((resumed ? "Resuming run " : "Run ") + runId + ": playbook " + playbook + " on " + machines.size() + " machine(s): "
                + String.join(", ", machines));
        for (String machine : machines) {
            lines.put(machine, new Line("waiting", System.nanoTime(), ""));
        }
        out.flush();
        if (live) {
            ticker = Thread.ofPlatform().daemon().name("provision-progress").start(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        Thread.sleep(1000);
                    } catch (InterruptedException e) {
                        return;
                    }
                    redraw();
                }
            });
        }
    }

    @Override
    public synchronized void stepStarted(String machine, String step) {
        lines.put(machine, new Line(step, System.nanoTime(), ""));
        redrawLocked();
    }

    @Override
    public synchronized void progress(String machine, String step, String line) {
        Line current = lines.get(machine);
        lines.put(machine, new Line(step, current == null ? System.nanoTime() : current.startedNanos(), line));
        redrawLocked();
    }

    @Override
    public synchronized void stepFinished(String machine, String step, StepStatus status, String summary) {
        Line current = lines.get(machine);
        long elapsed = current == null ? 0 : System.nanoTime() - current.startedNanos();
        String shown = status == StepStatus.WAITING_FOR_OPERATOR && summary != null ? summary.lines().findFirst().orElse("") : summary;
        String text = String.format(Locale.ROOT, "%-14s %-26s %-22s %5.1f s  %s", machine, step, status.label(), elapsed / 1e9,
                abbreviate(shown, 160));
        printAbove(text);
        lines.put(machine, new Line(status == StepStatus.FAILED ? "FAILED at " + step : "after " + step, System.nanoTime(), ""));
        redrawLocked();
    }

    @Override
    public synchronized void message(String text) {
        printAbove(text);
    }

    @Override
    public CompletableFuture<OperatorAnswer> operatorNeeded(OperatorRequest request) {
        if (!interactive) {
            synchronized (this) {
                printAbove("A person is needed on " + request.machine() + ": " + request.title() + " (left waiting-for-operator; run again"
                        + " without --non-interactive to be walked through it, or confirm it in the console)");
            }
            return CompletableFuture.completedFuture(OperatorAnswer.defer());
        }
        synchronized (this) {
            prompting = true;
            clearLocked();
            out.println();
            out.print(request.text());
            out.println("  Type 'done' when finished (macfleet then waits for " + request.machine() + " and verifies over SSH),");
            out.println("  'later' to leave this step waiting, or 'abort' to stop " + request.machine() + ".");
            promptLine = "  " + request.machine() + " > ";
            out.print(promptLine);
            out.flush();
            startReader();
        }
        CompletableFuture<OperatorAnswer> answer = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                while (!answer.isDone()) {
                    String line = answers.poll(200, TimeUnit.MILLISECONDS);
                    if (line == null) {
                        continue;
                    }
                    String word = line.strip().toLowerCase(Locale.ROOT);
                    OperatorAnswer parsed = switch (word) {
                        case "done", "d", "yes", "y" -> OperatorAnswer.done(actor);
                        case "abort", "a" -> OperatorAnswer.abort(actor);
                        case "later", "l", NO_INPUT -> OperatorAnswer.defer();
                        default -> null;
                    };
                    if (parsed == null) {
                        synchronized (this) {
                            out.print("  please type done, later or abort > ");
                            out.flush();
                        }
                        continue;
                    }
                    if (word.equals(NO_INPUT)) {
                        answers.offer(NO_INPUT);
                    }
                    synchronized (this) {
                        prompting = false;
                        if (parsed.kind() == OperatorAnswer.Kind.DONE) {
                            out.println("  waiting for " + request.machine() + " to answer over SSH and verifying (up to a few minutes)...");
                        }
                        out.flush();
                    }
                    answer.complete(parsed);
                }
            } catch (InterruptedException e) {
                answer.complete(OperatorAnswer.defer());
            }
        });
        answer.whenComplete((value, error) -> {
            synchronized (this) {
                prompting = false;
            }
        });
        return answer;
    }

    @Override
    public synchronized void operatorVerified(OperatorRequest request, boolean verified, String detail) {
        if (verified) {
            printAbove("  " + request.machine() + ": verified (" + abbreviate(detail, 200) + "); confirmed by " + actor);
        } else {
            printAbove("  " + request.machine() + ": NOT verified: " + abbreviate(detail, 300) + "\n  Repeat the steps below, or type abort.");
        }
    }

    /** Stops the live redraw; leaves the last lines on screen. */
    public synchronized void finish() {
        if (ticker != null) {
            ticker.interrupt();
        }
        redrawLocked();
        drawn = 0;
        out.flush();
    }

    private void startReader() {
        if (reader != null) {
            return;
        }
        reader = Thread.ofPlatform().daemon().name("provision-stdin").start(() -> {
            try {
                String line;
                while ((line = in.readLine()) != null) {
                    answers.offer(line);
                }
            } catch (IOException e) {
                // Unreadable input counts as no input: the step is left waiting.
            }
            answers.offer(NO_INPUT);
        });
    }

    private synchronized void redraw() {
        redrawLocked();
    }

    private void printAbove(String text) {
        if (prompting) {
            // A prompt is open: the line goes below it, and the prompt is shown again.
            out.println();
            out.println(text);
            out.print(promptLine);
            out.flush();
            return;
        }
        clearLocked();
        out.println(text);
        redrawLocked();
    }

    private void clearLocked() {
        if (!live || drawn == 0) {
            return;
        }
        out.print("\033[" + drawn + "A");
        for (int index = 0; index < drawn; index++) {
            out.print("\033[2K\n");
        }
        out.print("\033[" + drawn + "A");
        drawn = 0;
    }

    private void redrawLocked() {
        if (!live || prompting) {
            out.flush();
            return;
        }
        clearLocked();
        for (Map.Entry<String, Line> entry : lines.entrySet()) {
            Line line = entry.getValue();
            long seconds = Duration.ofNanos(System.nanoTime() - line.startedNanos()).toSeconds();
            out.print("\033[2K" + String.format(Locale.ROOT, "  %-14s %-30s %4d s  %s", entry.getKey(), line.step(), seconds,
                    abbreviate(line.note(), 60)) + "\n");
        }
        drawn = lines.size();
        out.flush();
    }

    private static String abbreviate(String text, int length) {
        if (text == null) {
            return "";
        }
        String single = text.replace('\n', ' ');
        return single.length() <= length ? single : single.substring(0, length) + "...";
    }
}
