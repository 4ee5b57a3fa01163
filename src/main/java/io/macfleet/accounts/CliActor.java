package io.macfleet.accounts;

/** Who acts for the audit log when the CLI changes accounts: the operating system user running it. */
final class CliActor {

    private CliActor() {
    }

    static String name() {
        return "cli:" + System.getProperty("user.name", "unknown");
    }
}
