package io.macfleet.mdm;

/**
 * What a write did on the server. KMFDDM answers 204 when it stored something new or different (and then sends the
 * DeclarativeManagement sync to the affected devices by itself) and 304 when nothing changed (no sync). A campaign
 * that resumes after a crash relies on this: writing the same declaration again is {@link #UNCHANGED} and reaches no
 * device twice.
 */
public enum Change {
    CHANGED, UNCHANGED,
    /**
     * Stored and the sync command queued, but the server could not push (NanoHUB answers 500 with a push error, e.g.
     * an expired or missing push certificate). The device gets the change at its next check-in; writing it again is
     * {@link #UNCHANGED}, so nothing is queued twice.
     */
    CHANGED_PUSH_FAILED;

    /** Whether the server now holds something it did not hold before. */
    public boolean changed() {
        return this != UNCHANGED;
    }
}
