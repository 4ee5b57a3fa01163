package io.macfleet.cli;

import io.macfleet.command.CommandFailure;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * The one place that turns a feature's failure into what the user sees: {@code macfleet <command>: <message>} on
 * stderr and the exit code of the failure's kind ({@link CommandFailure.Kind}). Commands let such exceptions escape
 * instead of mapping them one by one. Any other exception is a defect and keeps picocli's handling (stack trace, 1).
 */
final class FailureExitCodes implements IExecutionExceptionHandler {

    @Override
    public int handleExecutionException(Exception exception, CommandLine commandLine, ParseResult parsed) throws Exception {
        if (!(exception instanceof CommandFailure failure)) {
            throw exception;
        }
        commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": " + exception.getMessage());
        commandLine.getErr().flush();
        return failure.failureKind().exitCode();
    }
}
