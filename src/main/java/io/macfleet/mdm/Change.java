package io.macfleet.mdm;

/**
 * What a write did on the server. KMFDDM answers 204 when it stored something new or different (and then sends the
 * DeclarativeManagement sync to the affected devices by itself) and 304 when nothing changed (no sync). A campaign
 * that resumes after a crash relies on this: writing the same declaration again is {@link #UNCHANGED} and reaches no
 * device twice.
 */
public enum Change {
    CHANGED, UNCHANGED
}
