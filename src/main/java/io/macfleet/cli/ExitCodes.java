package io.macfleet.cli;

/**
 * Exit codes of every `macfleet` command, as documented in README.md and in `macfleet --help`.
 */
public final class ExitCodes {
    public static final int OK = 0;
    public static final int CHECK_FAILED = 1;
    public static final int USAGE = 2;
    public static final int NEEDS_OPERATOR = 3;

    private ExitCodes() {
    }
}
