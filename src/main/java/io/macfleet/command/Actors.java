package io.macfleet.command;

/**
 * Who acts, for the audit log, when the command line acts: {@code --actor NAME} when given, else {@code cli:} and the
 * operating system user ({@code cli:alice}). The prefix keeps a command-line user apart from a console or API
 * account of the same name. The only place that reads the operating system user.
 */
public final class Actors {

    private static final String PREFIX = "cli:";

    /** What `macfleet demo` does on its own (inventory, provisioning, the OS update, the node's deployment) is attributed to it. */
    public static final String DEMO = "demo";

    private Actors() {
    }

    /** The operating system user running this process. */
    public static String osUser() {
        return System.getProperty("user.name", "unknown");
    }

    /** The actor of the command line when no --actor is given: {@code cli:alice}. */
    public static String commandLine() {
        return PREFIX + osUser();
    }

    /** The --actor given, else {@link #commandLine()}. */
    public static String resolve(String actor) {
        return actor == null || actor.isBlank() ? commandLine() : actor;
    }

    /** Kept in the audit detail when --actor differs from the OS user: --actor is a claim, the OS user is what the machine knows. */
    public static String osUserNote(String actor) {
        return actor == null || actor.isBlank() || actor.equals(osUser()) || actor.equals(commandLine()) ? "" : " (os user " + osUser() + ")";
    }
}
