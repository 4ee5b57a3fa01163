package io.macfleet.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * Every failure of every command leaves through one path: the command throws a {@link CommandFailure} and
 * {@link FailureExitCodes} prints it and gives the exit code. No command returns a failing exit code itself.
 */
class OneFailurePathTest {

    private static final Path SOURCES = Path.of("src/main/java");

    /** A failing code named in a command, or a literal non-zero code returned: the command maps a failure itself. */
    private static final Pattern OWN_MAPPING = Pattern.compile(
            "ExitCodes\\.(USAGE|CHECK_FAILED|NEEDS_OPERATOR)|return\\s+[1-9]\\s*;|System\\.exit\\(");

    /** `inventory plan --detailed-exitcode` answers 4 for "there are changes": a result for scripts, not a failure. */
    private static final Set<String> RESULT_CODES = Set.of("CHANGES_PRESENT");

    private static void every(CommandLine command, List<CommandLine> all) {
        all.add(command);
        command.getSubcommands().forEach((name, sub) -> {
            if (name.equals(sub.getCommandName())) {
                every(sub, all);
            }
        });
    }

    private static Path sourceOf(Class<?> type) {
        Class<?> outer = type;
        while (outer.getEnclosingClass() != null) {
            outer = outer.getEnclosingClass();
        }
        return SOURCES.resolve(outer.getName().replace('.', '/') + ".java");
    }

    @Test
    void everyCommandOfTheTreeLeavesItsFailuresToTheOneHandler() throws IOException {
        List<CommandLine> commands = new ArrayList<>();
        every(PlainCommandLine.configure(new CommandLine(MacfleetCommand.class)), commands);
        Set<Path> sources = new TreeSet<>();
        for (CommandLine command : commands) {
            assertThat(command.getExecutionExceptionHandler()).as(command.getCommandSpec().qualifiedName()).isInstanceOf(FailureExitCodes.class);
            if (command.getCommand() instanceof Callable<?>) {
                sources.add(sourceOf(command.getCommand().getClass()));
            }
        }
        // Every top-level command group and its files (the test must see them to mean anything).
        assertThat(commands).hasSizeGreaterThan(60);
        assertThat(sources).hasSizeGreaterThan(15).allSatisfy(source -> assertThat(source).exists());
        List<String> ownMappings = new ArrayList<>();
        for (Path source : sources) {
            List<String> lines = Files.readAllLines(source);
            for (int i = 0; i < lines.size(); i++) {
                Matcher matcher = OWN_MAPPING.matcher(lines.get(i));
                if (matcher.find() && RESULT_CODES.stream().noneMatch(lines.get(i)::contains)) {
                    ownMappings.add(source + ":" + (i + 1) + ": " + lines.get(i).strip());
                }
            }
        }
        assertThat(ownMappings).as("commands that return a failing exit code instead of throwing a CommandFailure").isEmpty();
    }

    @Test
    void noCodeOutsideTheCommandPackageNamesAFailingExitCode() throws IOException {
        List<String> found = new ArrayList<>();
        try (var files = Files.walk(SOURCES)) {
            for (Path file : files.filter(path -> path.toString().endsWith(".java")).toList()) {
                if (file.startsWith(SOURCES.resolve("io/macfleet/command"))) {
                    continue;
                }
                String text = Files.readString(file);
                Matcher matcher = Pattern.compile("ExitCodes\\.(USAGE|CHECK_FAILED|NEEDS_OPERATOR)").matcher(text);
                if (matcher.find()) {
                    found.add(file + ": " + matcher.group());
                }
            }
        }
        assertThat(found).isEmpty();
    }

    // ---- the mapper, with each failure type ----

    static final class FeatureFailure extends RuntimeException implements CommandFailure {
        FeatureFailure(String message) {
            super(message);
        }

        @Override
        public Kind failureKind() {
            return Kind.USAGE;
        }
    }

    @Command(name = "macfleet", subcommands = Failing.class)
    static class Root {
    }

    @Command(name = "fail")
    static class Failing implements Callable<Integer> {
        @Parameters(index = "0")
        String how;

        @Override
        public Integer call() {
            throw switch (how) {
                case "usage" -> CommandException.usage("--limit must be at least 1, was 0");
                case "check" -> CommandException.checkFailed("no facts stored for studio-01 yet");
                case "operator" -> CommandException.needsOperator("studio-02 waits in Recovery");
                case "line" -> CommandException.line(CommandFailure.Kind.CHECK_FAILED, "macfleet: apply failed, nothing was changed: disk full");
                case "reported" -> CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
                case "feature" -> new FeatureFailure("unknown machine 'studio-99'");
                default -> new IllegalStateException("a defect");
            };
        }
    }

    private record Result(int exitCode, String err) {
    }

    private static Result run(String how) {
        StringWriter err = new StringWriter();
        CommandLine commandLine = PlainCommandLine.configure(new CommandLine(new Root())).setErr(new PrintWriter(err, true));
        return new Result(commandLine.execute("fail", how), err.toString());
    }

    @Test
    void eachFailureTypeBecomesItsLineAndItsExitCode() {
        String newline = System.lineSeparator();
        assertThat(run("usage")).isEqualTo(new Result(2, "macfleet fail: --limit must be at least 1, was 0" + newline));
        assertThat(run("check")).isEqualTo(new Result(1, "macfleet fail: no facts stored for studio-01 yet" + newline));
        assertThat(run("operator")).isEqualTo(new Result(3, "macfleet fail: studio-02 waits in Recovery" + newline));
        assertThat(run("line")).isEqualTo(new Result(1, "macfleet: apply failed, nothing was changed: disk full" + newline));
        assertThat(run("reported")).as("the command's output already said why").isEqualTo(new Result(1, ""));
        assertThat(run("feature")).isEqualTo(new Result(2, "macfleet fail: unknown machine 'studio-99'" + newline));
        Result defect = run("defect");
        assertThat(defect.exitCode()).isEqualTo(1);
        assertThat(defect.err()).contains("java.lang.IllegalStateException: a defect");
    }

    @Test
    void aBadOptionIsAUsageErrorBeforeAnyCommandRuns() {
        StringWriter err = new StringWriter();
        CommandLine commandLine = PlainCommandLine.configure(new CommandLine(MacfleetCommand.class)).setErr(new PrintWriter(err, true));
        assertThat(commandLine.execute("audit", "--no-such-option")).isEqualTo(2);
        assertThat(err.toString()).contains("Unknown option: '--no-such-option'");
    }
}
