package io.macfleet.provision;

import io.macfleet.ssh.CommandResult;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A check: a read-only command and what its answer must look like: the exit code (default 0), regular
 * expressions that must all be found in its standard output (multi-line mode: ^ and $ match at line ends)
 * and ones that must not be.
 *
 * @param explain what it means when the check fails, for people ("RDMA is still disabled")
 */
public record CheckSpec(List<String> argv, boolean privileged, Integer timeoutSeconds, Integer exitCode,
                        List<String> outputMatches, List<String> outputDoesNotMatch, String explain) {

    public CheckSpec {
        outputMatches = outputMatches == null ? List.of() : List.copyOf(outputMatches);
        outputDoesNotMatch = outputDoesNotMatch == null ? List.of() : List.copyOf(outputDoesNotMatch);
        for (String regex : concat(outputMatches, outputDoesNotMatch)) {
            try {
                Pattern.compile(regex, Pattern.MULTILINE);
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("invalid regular expression '" + regex + "': " + e.getDescription());
            }
        }
        new CommandSpec(argv, privileged, timeoutSeconds); // validates argv (the fields are not assigned yet here)
    }

    CommandSpec command() {
        return new CommandSpec(argv, privileged, timeoutSeconds);
    }

    int expectedExitCode() {
        return exitCode == null ? 0 : exitCode;
    }

    /** Runs the check over the context's connection (or a fresh one), never changing the machine. */
    CheckResult evaluate(MachineContext context, boolean freshConnection) {
        CommandResult result = context.execute(command(), true, freshConnection);
        return judge(result, context);
    }

    CheckResult judge(CommandResult result, MachineContext context) {
        String shown = "`" + result.command().display() + "`";
        if (result.exitStatus() == null || result.exitStatus() != expectedExitCode()) {
            return CheckResult.notSatisfied(reason(shown + " exited with " + result.exitStatus() + " (expected " + expectedExitCode() + ")"
                    + firstLine(result.stderr().isBlank() ? result.stdout() : result.stderr())), plain(shown + " failed"));
        }
        for (String regex : outputMatches) {
            if (!Pattern.compile(regex, Pattern.MULTILINE).matcher(result.stdout()).find()) {
                return CheckResult.notSatisfied(reason(shown + " output does not match /" + regex + "/" + firstLine(result.stdout())),
                        plain(shown + " does not answer as expected yet"));
            }
        }
        for (String regex : outputDoesNotMatch) {
            if (Pattern.compile(regex, Pattern.MULTILINE).matcher(result.stdout()).find()) {
                return CheckResult.notSatisfied(reason(shown + " output matches /" + regex + "/" + firstLine(result.stdout())),
                        plain(shown + " does not answer as expected yet"));
            }
        }
        return CheckResult.satisfied(shown + " as expected");
    }

    /** For a person: the check's explanation alone, or a sentence without the pattern and the raw output. */
    private String plain(String withoutExplanation) {
        return explain == null || explain.isBlank() ? withoutExplanation : explain;
    }

    private String reason(String observed) {
        return explain == null || explain.isBlank() ? observed : explain + " (" + observed + ")";
    }

    private static String firstLine(String output) {
        String line = output == null ? "" : output.strip().lines().findFirst().orElse("");
        if (line.isEmpty()) {
            return "";
        }
        return ": " + (line.length() > 160 ? line.substring(0, 160) + "..." : line);
    }

    private static List<String> concat(List<String> first, List<String> second) {
        return java.util.stream.Stream.concat(first.stream(), second.stream()).toList();
    }
}
