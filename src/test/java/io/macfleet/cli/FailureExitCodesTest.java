package io.macfleet.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.CommandFailure;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** The one mapping from a feature's failure to the message and the exit code. */
class FailureExitCodesTest {

    static final class Refused extends RuntimeException implements CommandFailure {
        private final Kind kind;

        Refused(String message, Kind kind) {
            super(message);
            this.kind = kind;
        }

        @Override
        public Kind failureKind() {
            return kind;
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
            switch (how) {
                case "usage" -> throw new Refused("unknown machine 'studio-99'", CommandFailure.Kind.USAGE);
                case "check" -> throw new Refused("database unavailable", CommandFailure.Kind.CHECK_FAILED);
                case "operator" -> throw new Refused("waiting for a person", CommandFailure.Kind.NEEDS_OPERATOR);
                default -> throw new IllegalStateException("a defect");
            }
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
    void aFailureBecomesTheCommandsNameItsMessageAndTheExitCodeOfItsKind() {
        assertThat(run("usage")).isEqualTo(new Result(2, "macfleet fail: unknown machine 'studio-99'" + System.lineSeparator()));
        assertThat(run("check")).isEqualTo(new Result(1, "macfleet fail: database unavailable" + System.lineSeparator()));
        assertThat(run("operator").exitCode()).isEqualTo(3);
    }

    @Test
    void anyOtherExceptionIsADefectAndKeepsItsStackTrace() {
        Result defect = run("defect");
        assertThat(defect.exitCode()).isEqualTo(1);
        assertThat(defect.err()).contains("java.lang.IllegalStateException: a defect", "at io.macfleet.cli.FailureExitCodesTest");
    }
}
