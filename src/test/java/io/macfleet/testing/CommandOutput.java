package io.macfleet.testing;

import io.quarkus.test.junit.main.LaunchResult;
import java.util.stream.Collectors;

/** What a command launched by a {@code @QuarkusMainTest} printed on standard output, without the launcher's log lines. */
public final class CommandOutput {

    private CommandOutput() {
    }

    /** The main-test launcher mixes captured log lines ("12:34:56 INFO ...") into the output; real runs log to stderr. */
    public static String output(LaunchResult result) {
        return result.getOutput().lines().filter(line -> !line.matches("^\\d\\d:\\d\\d:\\d\\d .*")).collect(Collectors.joining("\n"));
    }
}
