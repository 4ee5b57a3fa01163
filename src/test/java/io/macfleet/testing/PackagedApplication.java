package io.macfleet.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The packaged {@code macfleet} (target/quarkus-app, or the jar named by the {@code macfleet.application.jar} system
 * property) run as its own process, as an operator runs it: for the integration tests that kill it mid-work. Output
 * and error output go to a log file, read back when it ends.
 */
public final class PackagedApplication {

    /** How a finished run ended: its exit code and everything it printed. */
    public record Result(int exitCode, String output) {
    }

    private PackagedApplication() {
    }

    /** Runs {@code macfleet ARGUMENTS} to its end; a run that outlives {@code timeout} is killed and fails the test. */
    public static Result run(Duration timeout, Map<String, String> environment, Path log, String... arguments) throws IOException,
            InterruptedException {
        Process process = start(environment, log, arguments);
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("macfleet " + String.join(" ", arguments) + " did not finish within " + timeout.toSeconds()
                    + " s:\n" + Files.readString(log));
        }
        return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }

    /** Starts {@code macfleet ARGUMENTS} in the working directory with the environment added, writing to {@code log}. */
    public static Process start(Map<String, String> environment, Path log, String... arguments) throws IOException {
        String jar = System.getProperty("macfleet.application.jar", "target/quarkus-app/quarkus-run.jar");
        assertThat(Path.of(jar)).as("the packaged application (run in `verify`, after `package`)").exists();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                .directory(new File(System.getProperty("user.dir")));
        builder.environment().putAll(environment);
        return builder.start();
    }
}
