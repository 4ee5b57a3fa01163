package io.macfleet.provision;

import java.util.List;

/**
 * What a person must do on one machine for an operator step: shown by the CLI prompt, stored with the waiting
 * step for the console, and named in the message of a non-interactive run.
 *
 * @param waitSeconds how long the whole thing usually takes, until the machine answers again
 * @param whyNeeded what is still wrong, for a person (no patterns, no raw command output)
 * @param details what the checks saw, with commands, patterns and output (shown on request), or null
 */
public record OperatorRequest(long runId, String machine, String step, String title, List<String> instructions, String expect,
                              int waitSeconds, String whyNeeded, String details) {

    public OperatorRequest {
        instructions = List.copyOf(instructions);
    }

    public OperatorRequest(long runId, String machine, String step, String title, List<String> instructions, String expect,
                           int waitSeconds, String whyNeeded) {
        this(runId, machine, step, title, instructions, expect, waitSeconds, whyNeeded, null);
    }

    /** The same walkthrough with what the checks saw, for whoever asks for details. */
    public OperatorRequest withDetails(String details) {
        return new OperatorRequest(runId, machine, step, title, instructions, expect, waitSeconds, whyNeeded, details);
    }

    /** The same walkthrough with {@code redact} applied to every text a person reads (secrets never reach the database). */
    public OperatorRequest redacted(java.util.function.UnaryOperator<String> redact) {
        return new OperatorRequest(runId, machine, step, redact.apply(title), instructions.stream().map(redact).toList(),
                redact.apply(expect), waitSeconds, whyNeeded == null ? null : redact.apply(whyNeeded), details == null ? null : redact.apply(details));
    }

    /** The walkthrough as text: numbered instructions, what they will see, how long to wait. */
    public String text() {
        StringBuilder out = new StringBuilder();
        out.append(title).append(" on ").append(machine).append(" (run ").append(runId).append(", step ").append(step).append(")\n");
        if (whyNeeded != null && !whyNeeded.isBlank()) {
            out.append("  Why: ").append(whyNeeded).append('\n');
        }
        for (int index = 0; index < instructions.size(); index++) {
            out.append(String.format("  %2d. %s%n", index + 1, instructions.get(index)));
        }
        out.append("  You will see: ").append(expect).append('\n');
        out.append("  Expect about ").append(minutes(waitSeconds)).append(" until ").append(machine).append(" answers over SSH again.\n");
        return out.toString();
    }

    /**
     * One walkthrough for several Macs of the same step, as a person doing them side by side reads it: the steps once
     * (a step that differs per Mac, e.g. naming its address, once per Mac), why each Mac needs it, how long to wait.
     */
    public static String text(List<OperatorRequest> requests) {
        OperatorRequest first = requests.getFirst();
        List<String> machines = requests.stream().map(OperatorRequest::machine).toList();
        StringBuilder out = new StringBuilder();
        out.append(first.title).append(" on ").append(String.join(", ", machines)).append(" (run ").append(first.runId)
                .append(", step ").append(first.step).append(")\n");
        List<String> reasons = requests.stream().map(OperatorRequest::whyNeeded).filter(why -> why != null && !why.isBlank()).distinct().toList();
        if (reasons.size() == 1 && requests.stream().allMatch(request -> reasons.getFirst().equals(request.whyNeeded))) {
            out.append("  Why: ").append(reasons.getFirst()).append('\n');
        } else {
            for (OperatorRequest request : requests) {
                if (request.whyNeeded != null && !request.whyNeeded.isBlank()) {
                    out.append("  Why (").append(request.machine).append("): ").append(request.whyNeeded).append('\n');
                }
            }
        }
        int steps = requests.stream().mapToInt(request -> request.instructions.size()).max().orElse(0);
        for (int index = 0; index < steps; index++) {
            int at = index;
            List<String> texts = requests.stream().map(request -> at < request.instructions.size() ? request.instructions.get(at) : "").distinct().toList();
            if (texts.size() == 1) {
                out.append(String.format("  %2d. %s%n", index + 1, texts.getFirst()));
                continue;
            }
            for (int machine = 0; machine < requests.size(); machine++) {
                String text = at < requests.get(machine).instructions.size() ? requests.get(machine).instructions.get(at) : "";
                out.append(machine == 0 ? String.format("  %2d. ", index + 1) : "      ").append(text).append('\n');
            }
        }
        out.append("  You will see: ").append(first.expect).append('\n');
        out.append("  Expect about ").append(minutes(first.waitSeconds)).append(" until each of them answers over SSH again.\n");
        return out.toString();
    }

    /** How long it usually takes, in words: "300 seconds" reads worse than "5 minutes". */
    public String expectedWait() {
        return minutes(waitSeconds);
    }

    static String minutes(int seconds) {
        return seconds < 120 ? seconds + " seconds" : (seconds + 59) / 60 + " minutes";
    }
}
