package io.macfleet.cli;

import io.macfleet.command.CommandFailure;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * The one place that turns a command's failure into what the user sees: {@code macfleet <command>: <message>} on
 * stderr (or the failure's own line, see {@link CommandFailure#line}) and the exit code of the failure's kind
 * ({@link CommandFailure.Kind}). Commands throw such failures ({@code command/CommandException}, or a feature's
 * exception that implements {@link CommandFailure}) instead of printing and returning a code. Any other exception is
 * a defect and keeps picocli's handling (stack trace, 1).
 */
final class FailureExitCodes implements IExecutionExceptionHandler {

    @Override
    public int handleExecutionException(Exception exception, CommandLine commandLine, ParseResult parsed) throws Exception {
        if (!(exception instanceof CommandFailure failure)) {
            throw exception;
        }
        String line = failure.line(commandLine.getCommandSpec().qualifiedName());
        if (line != null) {
            commandLine.getErr().println(line);
        }
        commandLine.getErr().flush();
        return failure.failureKind().exitCode();
    }
}
