package io.macfleet.provision;

import java.util.List;

/**
 * What a person must do on one machine for an operator step: shown by the CLI prompt, stored with the waiting
 * step for the console, and named in the message of a non-interactive run.
 *
 * @param waitSeconds how long the whole thing usually takes, until the machine answers again
 * @param whyNeeded what the verification saw (what is still wrong)
 */
public record OperatorRequest(long runId, String machine, String step, String title, List<String> instructions, String expect,
                              int waitSeconds, String whyNeeded) {

    public OperatorRequest {
        instructions = List.copyOf(instructions);
    }

    /** The same walkthrough with {@code redact} applied to every text a person reads (secrets never reach the database). */
    public OperatorRequest redacted(java.util.function.UnaryOperator<String> redact) {
        return new OperatorRequest(runId, machine, step, redact.apply(title), instructions.stream().map(redact).toList(),
                redact.apply(expect), waitSeconds, whyNeeded == null ? null : redact.apply(whyNeeded));
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

    /** How long it usually takes, in words: "300 seconds" reads worse than "5 minutes". */
    public String expectedWait() {
        return minutes(waitSeconds);
    }

    static String minutes(int seconds) {
        return seconds < 120 ? seconds + " seconds" : (seconds + 59) / 60 + " minutes";
    }
}
