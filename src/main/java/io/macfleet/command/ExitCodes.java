package io.macfleet.command;

/**
 * Exit codes of every `macfleet` command, as documented in `macfleet --help`. Kept outside the `cli` package so
 * that feature commands can return them without depending on the CLI's entry point.
 */
public final class ExitCodes {
    public static final int OK = 0;
    public static final int CHECK_FAILED = 1;
    public static final int USAGE = 2;
    public static final int NEEDS_OPERATOR = 3;

    private ExitCodes() {
    }
}
