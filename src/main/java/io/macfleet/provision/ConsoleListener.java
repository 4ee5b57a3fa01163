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

    /** A Mac waiting for a person, and where their answer goes. */
    private record Pending(OperatorRequest request, CompletableFuture<OperatorAnswer> answer) {
    }

    /** How long to gather walkthroughs that arrive together before asking for all of them at once. */
    private static final long GATHER_REQUESTS = 750;

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
    private Thread dispatcher;
    private final Map<String, Pending> pending = new LinkedHashMap<>();
    /** Macs that were waiting for a person and no longer are: a line naming one of them with others is not a typo. */
    private final java.util.Set<String> noLongerWaiting = new java.util.HashSet<>();
    private final java.util.List<Pending> unshown = new java.util.ArrayList<>();
    private boolean showScheduled;
    private boolean inputEnded;
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
        CompletableFuture<OperatorAnswer> answer = new CompletableFuture<>();
        Pending waiting = new Pending(request, answer);
        synchronized (this) {
            if (inputEnded) {
                return CompletableFuture.completedFuture(OperatorAnswer.defer());
            }
            pending.put(request.machine(), waiting);
            unshown.add(waiting);
            startReader();
            startDispatcher();
            if (!showScheduled) {
                // Machines reach the step within moments of each other: gather them, then ask for all of them together.
                showScheduled = true;
                Thread.ofVirtual().start(() -> {
                    try {
                        Thread.sleep(GATHER_REQUESTS);
                    } catch (InterruptedException e) {
                        // Show what there is.
                    }
                    synchronized (this) {
                        showScheduled = false;
                        showLocked();
                    }
                });
            }
        }
        answer.whenComplete((value, error) -> {
            synchronized (this) {
                if (pending.get(request.machine()) != waiting) {
                    return;
                }
                pending.remove(request.machine());
                noLongerWaiting.add(request.machine());
                unshown.remove(waiting);
                if (answer.isCancelled()) {
                    // Checked again while waiting and found done (or confirmed elsewhere): no longer asked for.
                    printAbove("  " + request.machine() + ": done meanwhile (checked again), no longer waiting for a person");
                }
                if (pending.isEmpty()) {
                    prompting = false;
                } else if (answer.isCancelled()) {
                    promptLocked();
                }
            }
        });
        return answer;
    }

    /** Prints the walkthroughs asked for since the last time, grouped by step, then the prompt for every waiting Mac. */
    private void showLocked() {
        if (unshown.isEmpty()) {
            return;
        }
        prompting = true;
        clearLocked();
        Map<String, java.util.List<OperatorRequest>> groups = new LinkedHashMap<>();
        for (Pending waiting : unshown) {
            OperatorRequest request = waiting.request();
            groups.computeIfAbsent(request.runId() + "/" + request.step() + "/" + request.title(), key -> new java.util.ArrayList<>()).add(request);
        }
        unshown.clear();
        for (java.util.List<OperatorRequest> group : groups.values()) {
            out.println();
            out.print(group.size() == 1 ? group.getFirst().text() : OperatorRequest.text(group));
        }
        promptLocked();
    }

    /** What can be typed, and the prompt naming every Mac waiting for a person. */
    private void promptLocked() {
        java.util.List<String> machines = java.util.List.copyOf(pending.keySet());
        if (machines.size() == 1) {
            String machine = machines.getFirst();
            out.println("  Type 'done' when finished (macfleet then waits for " + machine + " and verifies over SSH),");
            out.println("  'later' to leave this step waiting, or 'abort' to stop " + machine + " ('details' shows what the checks saw).");
        } else {
            out.println("  Waiting for a person: " + String.join(", ", machines) + ".");
            out.println("  Type 'done " + machines.getFirst() + "' (several names, or 'done all') when a Mac is finished: macfleet then waits for it");
            out.println("  and verifies over SSH. 'later NAME|all' leaves it waiting, 'abort NAME|all' stops it, 'details' shows what the checks saw.");
        }
        promptLine = "  " + String.join(" ", machines) + " > ";
        out.print(promptLine);
        out.flush();
    }

    /** Reads the person's lines and answers the Macs they name, one line at a time. */
    private void startDispatcher() {
        if (dispatcher != null) {
            return;
        }
        dispatcher = Thread.ofVirtual().name("provision-operator").start(() -> {
            try {
                while (true) {
                    String line = answers.take();
                    if (line.equals(NO_INPUT)) {
                        java.util.List<Pending> all;
                        synchronized (this) {
                            inputEnded = true;
                            all = java.util.List.copyOf(pending.values());
                        }
                        all.forEach(waiting -> waiting.answer().complete(OperatorAnswer.defer()));
                        return;
                    }
                    answer(line);
                }
            } catch (InterruptedException e) {
                // The run is over.
            }
        });
    }

    /** One typed line: a word (done, later, abort, details) and the Macs it is for (names, or all). */
    private void answer(String line) {
        java.util.List<String> words = java.util.Arrays.stream(line.strip().split("\\s+")).filter(word -> !word.isEmpty()).toList();
        java.util.List<Pending> targets = new java.util.ArrayList<>();
        OperatorAnswer parsed;
        synchronized (this) {
            if (pending.isEmpty()) {
                return;
            }
            String word = words.isEmpty() ? "" : words.getFirst().toLowerCase(Locale.ROOT);
            parsed = switch (word) {
                case "done", "d", "yes", "y" -> OperatorAnswer.done(actor);
                case "abort", "a" -> OperatorAnswer.abort(actor);
                case "later", "l" -> OperatorAnswer.defer();
                default -> null;
            };
            java.util.List<String> names = words.isEmpty() ? java.util.List.of() : words.subList(1, words.size());
            if (word.equals("details") || word.equals("detail")) {
                for (Pending waiting : pending.values()) {
                    if (names.isEmpty() || names.contains(waiting.request().machine()) || names.contains("all")) {
                        OperatorRequest request = waiting.request();
                        out.println("  " + request.machine() + ": " + (request.details() == null ? request.whyNeeded() : request.details()));
                    }
                }
                out.print(promptLine);
                out.flush();
                return;
            }
            if (parsed == null) {
                out.print("  please type done, later, abort or details" + (pending.size() > 1 ? " with machine names or 'all'" : "") + " > ");
                out.flush();
                return;
            }
            if (names.isEmpty() && pending.size() > 1) {
                out.print("  " + pending.size() + " Macs are waiting: say which (" + word + " " + pending.keySet().iterator().next()
                        + ", or " + word + " all) > ");
                out.flush();
                return;
            }
            java.util.List<String> unknown = names.stream().filter(name -> !name.equalsIgnoreCase("all") && !pending.containsKey(name)).toList();
            // A Mac that finished while the person typed is no mistake: the others named on the line are still answered.
            java.util.List<String> finished = unknown.stream().filter(noLongerWaiting::contains).toList();
            java.util.List<String> mistyped = unknown.stream().filter(name -> !noLongerWaiting.contains(name)).toList();
            if (!mistyped.isEmpty()) {
                out.print("  not waiting for a person: " + String.join(", ", mistyped) + " (waiting: " + String.join(", ", pending.keySet()) + ") > ");
                out.flush();
                return;
            }
            if (!finished.isEmpty()) {
                out.println("  " + String.join(", ", finished) + ": no longer waiting for a person (finished meanwhile), nothing to do for "
                        + (finished.size() == 1 ? "it" : "them"));
                if (finished.size() == names.size()) {
                    out.print(promptLine);
                    out.flush();
                    return;
                }
            }
            for (Pending waiting : pending.values()) {
                if (names.isEmpty() || names.stream().anyMatch(name -> name.equalsIgnoreCase("all")) || names.contains(waiting.request().machine())) {
                    targets.add(waiting);
                }
            }
            if (parsed.kind() == OperatorAnswer.Kind.DONE) {
                out.println("  waiting for " + String.join(", ", targets.stream().map(waiting -> waiting.request().machine()).toList())
                        + " to answer over SSH and verifying (up to a few minutes)...");
            }
            out.flush();
        }
        for (Pending waiting : targets) {
            waiting.answer().complete(parsed);
        }
        synchronized (this) {
            if (!pending.isEmpty() && unshown.isEmpty()) {
                promptLocked();
            }
        }
    }

    @Override
    public synchronized void operatorVerified(OperatorRequest request, boolean verified, String detail) {
        if (verified) {
            printAbove("  " + request.machine() + ": verified (" + abbreviate(detail, 200) + "); confirmed by " + actor);
        } else {
            printAbove("  " + request.machine() + ": NOT verified: " + abbreviate(detail, 300) + "\n  Repeat the steps shown next, or type abort.");
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
