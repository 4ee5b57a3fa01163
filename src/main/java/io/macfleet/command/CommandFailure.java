package io.macfleet.command;

/**
 * An exception a feature throws that says which kind of failure it is, so that one handler (the CLI's
 * {@code FailureExitCodes}) turns it into the message {@code macfleet <command>: <message>} and the exit code of
 * its kind, instead of every command catching and mapping it itself.
 */
public interface CommandFailure {

    Kind failureKind();

    /**
     * What standard error shows for this failure of the command {@code commandPath} ({@code macfleet facts show}), or
     * null when the command's own output already said why (a report, a list of errors).
     */
    default String line(String commandPath) {
        return commandPath + ": " + ((Throwable) this).getMessage();
    }

    /** Kinds of failure, each with the exit code of {@link ExitCodes}. */
    enum Kind {
        /** A check failed or an operation could not complete (database, a machine, a refused configuration). */
        CHECK_FAILED(ExitCodes.CHECK_FAILED),
        /** Bad input: an unknown name, an unreadable file, a bad value. */
        USAGE(ExitCodes.USAGE),
        /** Stopped at a step that needs a person. */
        NEEDS_OPERATOR(ExitCodes.NEEDS_OPERATOR);

        private final int exitCode;

        Kind(int exitCode) {
            this.exitCode = exitCode;
        }

        public int exitCode() {
            return exitCode;
        }
    }
}
