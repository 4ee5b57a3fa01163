package io.macfleet.deployment;

import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code launchctl print system/LABEL} says about one service, read defensively: launchctl(1) warns that
 * this output "is NOT API in any sense at all", so only the service's own top-level lines are read (nested blocks
 * such as endpoints and coalitions repeat keys like {@code state} and {@code active count}), unknown lines are
 * ignored, and a value that cannot be read is absent rather than guessed.
 *
 * @param loaded false when launchd does not know the label ("Could not find service", exit 113)
 * @param state launchd's word: running, not running, waiting, spawn scheduled, xpcproxy...; empty when absent
 */
public record LaunchdService(boolean loaded, String state, OptionalLong pid, OptionalInt runs, LastExit lastExit) {

    /** How the last run ended, as far as launchd says. */
    public sealed interface LastExit {
        /** As the CLI and the deploy journal print it: {@code never exited}, {@code 78: EX_CONFIG}, {@code Killed: 9}. */
        default String describe() {
            return switch (this) {
                case NeverExited ignored -> "never exited";
                case Code code -> code.name().isEmpty() ? Integer.toString(code.code()) : code.code() + ": " + code.name();
                case Signal signal -> signal.name() + ": " + signal.number();
                case Unreadable unreadable -> unreadable.printed();
            };
        }

        /** Loaded and never exited, or launchd printed nothing about it. */
        record NeverExited() implements LastExit {
        }

        /** Exited with a status; {@code name} is launchd's annotation such as {@code EX_CONFIG} (78: program missing), or empty. */
        record Code(int code, String name) implements LastExit {
        }

        /** Ended by a signal, e.g. {@code Killed: 9}. */
        record Signal(int number, String name) implements LastExit {
        }

        /** A line was there and could not be read: kept as printed. */
        record Unreadable(String printed) implements LastExit {
        }
    }

    private static final Pattern LINE = Pattern.compile("^([a-z][a-z ()_-]*?) = (.*)$");
    private static final Pattern EXIT_CODE = Pattern.compile("(-?\\d+)(?:: (.*))?");
    private static final Pattern SIGNAL = Pattern.compile("(.*): (\\d+)");

    public static LaunchdService notLoaded() {
        return new LaunchdService(false, "", OptionalLong.empty(), OptionalInt.empty(), new LastExit.NeverExited());
    }

    public boolean running() {
        return loaded && state.equals("running") && pid.isPresent();
    }

    /**
     * Reads launchctl's answer: its exit status, standard output and standard error.
     */
    public static LaunchdService parse(int exitStatus, String stdout, String stderr) {
        if (exitStatus == 113 || stderr.contains("Could not find service") || stdout.contains("Could not find service")) {
            return notLoaded();
        }
        String state = "";
        OptionalLong pid = OptionalLong.empty();
        OptionalInt runs = OptionalInt.empty();
        LastExit exitCode = null;
        LastExit signal = null;
        int depth = 0;
        for (String raw : stdout.split("\n", -1)) {
            String line = raw.strip();
            if (line.isEmpty()) {
                continue;
            }
            if (line.equals("}")) {
                depth = Math.max(0, depth - 1);
                continue;
            }
            boolean opens = line.endsWith("{");
            // Depth 1 is inside "system/LABEL = {"; captures trimmed of their header count depth 0 as top level.
            boolean topLevel = depth <= 1;
            if (opens) {
                depth++;
                continue;
            }
            if (!topLevel) {
                continue;
            }
            Matcher matcher = LINE.matcher(line);
            if (!matcher.matches()) {
                continue;
            }
            String value = matcher.group(2).strip();
            switch (matcher.group(1)) {
                case "state" -> state = value;
                case "pid" -> pid = positiveLong(value);
                case "runs" -> runs = nonNegativeInt(value);
                case "last exit code" -> exitCode = exitCode(value);
                case "last terminating signal" -> signal = signal(value);
                default -> {
                    // Dozens of other fields, which vary by macOS release: not ours to read.
                }
            }
        }
        // launchd prints the signal instead of the exit code after a signal; when both appear the signal is the news.
        LastExit lastExit = signal != null ? signal : exitCode != null ? exitCode : new LastExit.NeverExited();
        return new LaunchdService(true, state, pid, runs, lastExit);
    }

    private static LastExit exitCode(String value) {
        if (value.equals("(never exited)")) {
            return new LastExit.NeverExited();
        }
        Matcher matcher = EXIT_CODE.matcher(value);
        if (!matcher.matches()) {
            return new LastExit.Unreadable(value);
        }
        try {
            return new LastExit.Code(Integer.parseInt(matcher.group(1)), matcher.group(2) == null ? "" : matcher.group(2).strip());
        } catch (NumberFormatException e) {
            return new LastExit.Unreadable(value);
        }
    }

    private static LastExit signal(String value) {
        Matcher matcher = SIGNAL.matcher(value);
        if (!matcher.matches()) {
            return new LastExit.Unreadable(value);
        }
        try {
            return new LastExit.Signal(Integer.parseInt(matcher.group(2)), matcher.group(1).strip());
        } catch (NumberFormatException e) {
            return new LastExit.Unreadable(value);
        }
    }

    private static OptionalLong positiveLong(String value) {
        try {
            long number = Long.parseLong(value);
            return number > 0 ? OptionalLong.of(number) : OptionalLong.empty();
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    private static OptionalInt nonNegativeInt(String value) {
        try {
            int number = Integer.parseInt(value);
            return number >= 0 ? OptionalInt.of(number) : OptionalInt.empty();
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
    }
}
