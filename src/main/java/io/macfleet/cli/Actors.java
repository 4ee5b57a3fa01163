package io.macfleet.cli;

/** Who acts, for the audit log: the --actor given, else the operating system user. */
public final class Actors {

    private Actors() {
    }

    public static String osUser() {
        return System.getProperty("user.name", "unknown");
    }

    public static String resolve(String actor) {
        return actor == null || actor.isBlank() ? osUser() : actor;
    }

    /** Kept in the audit detail when --actor differs from the OS user: --actor is a claim, the OS user is what the machine knows. */
    public static String osUserNote(String actor) {
        return actor == null || actor.isBlank() || actor.equals(osUser()) ? "" : " (os user " + osUser() + ")";
    }
}
