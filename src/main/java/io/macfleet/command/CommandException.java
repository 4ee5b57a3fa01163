package io.macfleet.command;

/**
 * The failure a command throws instead of printing a message and returning an exit code itself: the CLI's one
 * handler prints it and exits with its kind's code. Most messages are shown as {@code macfleet <command>: <message>}
 * ({@link #usage}, {@link #checkFailed}, {@link #needsOperator}); the few older ones that name the program rather
 * than the command keep their exact line ({@link #line}); a command whose output already said why (a report, a list
 * of errors) only sets the exit code ({@link #reported}).
 */
public final class CommandException extends RuntimeException implements CommandFailure {

    private final Kind kind;
    /** The whole line shown, when it is not "command: message"; empty when nothing is shown. */
    private final String exactLine;
    private final boolean silent;

    private CommandException(Kind kind, String message, String exactLine, boolean silent, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.exactLine = exactLine;
        this.silent = silent;
    }

    /** Bad input (exit 2): the message names what and where. */
    public static CommandException usage(String message) {
        return new CommandException(Kind.USAGE, message, null, false, null);
    }

    /** A check failed or an operation could not complete (exit 1). */
    public static CommandException checkFailed(String message) {
        return new CommandException(Kind.CHECK_FAILED, message, null, false, null);
    }

    /** Stopped at a step that needs a person (exit 3). */
    public static CommandException needsOperator(String message) {
        return new CommandException(Kind.NEEDS_OPERATOR, message, null, false, null);
    }

    /** A failure shown exactly as {@code line}, without the command's name (e.g. {@code macfleet: apply failed, ...}). */
    public static CommandException line(Kind kind, String line) {
        return new CommandException(kind, line, line, false, null);
    }

    /** The command's output already said why; only the exit code of {@code kind} remains to be given. */
    public static CommandException reported(Kind kind) {
        return new CommandException(kind, "(reported by the command's output)", null, true, null);
    }

    @Override
    public Kind failureKind() {
        return kind;
    }

    @Override
    public String line(String commandPath) {
        if (silent) {
            return null;
        }
        return exactLine != null ? exactLine : CommandFailure.super.line(commandPath);
    }
}
