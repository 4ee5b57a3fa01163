package io.macfleet.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.ExitCodes;
import io.macfleet.inventory.ExampleInventory;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line answered before (and instead of) a Quarkus start: help, version, usage errors and container-free
 * commands. Quarkus-backed behaviour of the same commands is in {@link CliTest}.
 */
class PlainCommandLineTest {

    @TempDir
    Path directory;

    private record Run(int exitCode, String out, String err) {
    }

    /** The real entry point in a separate JVM (as ./macfleet runs it), with the HTTP port given held by a socket. */
    private static Run mainWithPortHeld(int port, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "-Dquarkus.http.port=" + port, MacfleetMain.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("MACFLEET_HTTP_PORT", Integer.toString(port));
        Path out = Path.of(System.getProperty("java.io.tmpdir"), "plain-" + ProcessHandle.current().pid() + "-" + System.nanoTime() + ".out");
        Path err = Path.of(out + ".err");
        Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("%s finished", String.join(" ", args)).isTrue();
        Run run = new Run(process.exitValue(), java.nio.file.Files.readString(out), java.nio.file.Files.readString(err));
        java.nio.file.Files.deleteIfExists(out);
        java.nio.file.Files.deleteIfExists(err);
        return run;
    }

    @Test
    void serveAndDemoHelpPrintHelpAndExitZeroWhileTheHttpPortIsTaken() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            for (String command : List.of("serve", "demo")) {
                Run help = mainWithPortHeld(port, command, "--help");
                assertThat(help.exitCode()).as(help.err()).isZero();
                assertThat(help.out()).startsWith("Usage: macfleet " + command);
                assertThat(help.err()).doesNotContain("in use", "Exception");
            }
            Run demoClientHelp = mainWithPortHeld(port, "demo", "fault", "-h");
            assertThat(demoClientHelp.exitCode()).isZero();
            assertThat(demoClientHelp.out()).startsWith("Usage: macfleet demo fault");
        }
    }

    @Test
    void versionComesFromTheBuildWithoutQuarkus() throws Exception {
        Run version = mainWithPortHeld(0, "--version");
        assertThat(version.exitCode()).isZero();
        assertThat(version.out()).startsWith("macfleet ").contains("Java " + Runtime.version().feature()).doesNotContain("unknown");
    }

    /** Runs the plain command line in this JVM, capturing what it prints. */
    private static Answer plain(String... args) {
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            OptionalInt exitCode = PlainCommandLine.run(args);
            System.out.flush();
            System.err.flush();
            return new Answer(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
    }

    private record Answer(OptionalInt exitCode, String out, String err) {
    }

    @Test
    void inventoryValidateRunsWithoutTheContainer() throws Exception {
        Path inventory = directory.resolve("inventory");
        ExampleInventory.writeTo(inventory, false);
        Answer valid = plain("inventory", "validate", inventory.toString());
        assertThat(valid.exitCode()).hasValue(ExitCodes.OK);
        assertThat(valid.out()).contains("is valid: 1 cluster(s), 4 machine(s)");

        Answer missing = plain("inventory", "validate", directory.resolve("nowhere").toString());
        assertThat(missing.exitCode()).hasValue(ExitCodes.USAGE);
        assertThat(missing.err()).contains("not a directory");
    }

    @Test
    void usageErrorsAreAnsweredHereWithExitCodeTwo() {
        Answer unknown = plain("inventory", "validate", directory.toString(), "--frobnicate");
        assertThat(unknown.exitCode()).hasValue(ExitCodes.USAGE);
        assertThat(unknown.err()).contains("Unknown option: '--frobnicate'", "Usage: macfleet inventory validate");
    }

    @Test
    void commandsThatNeedTheDatabaseOrTheServiceAreHandedToQuarkus() {
        assertThat(plain("inventory", "apply", directory.toString()).exitCode()).isEmpty();
        assertThat(plain("facts", "--cluster", "llm-a").exitCode()).isEmpty();
        assertThat(plain("serve").exitCode()).isEmpty();
        assertThat(plain("demo").exitCode()).isEmpty();
        assertThat(plain("provision", "validate", directory.toString()).exitCode()).isEmpty();
    }

    @Test
    void helpOfEveryCommandIsAnsweredHere() {
        picocli.CommandLine tree = new picocli.CommandLine(MacfleetCommand.class);
        List<List<String>> paths = new ArrayList<>();
        collect(tree, new ArrayList<>(), paths);
        assertThat(paths).hasSizeGreaterThan(20);
        for (List<String> path : paths) {
            List<String> args = new ArrayList<>(path);
            args.add("--help");
            Answer help = plain(args.toArray(String[]::new));
            assertThat(help.exitCode()).as(String.join(" ", args)).hasValue(ExitCodes.OK);
            assertThat(help.out()).as(String.join(" ", args)).startsWith("Usage: macfleet" + (path.isEmpty() ? "" : " " + String.join(" ", path)));
        }
    }

    private static void collect(picocli.CommandLine command, List<String> path, List<List<String>> paths) {
        paths.add(List.copyOf(path));
        command.getSubcommands().forEach((name, sub) -> {
            if (name.equals(sub.getCommandName())) {
                List<String> next = new ArrayList<>(path);
                next.add(name);
                collect(sub, next, paths);
            }
        });
    }
}
