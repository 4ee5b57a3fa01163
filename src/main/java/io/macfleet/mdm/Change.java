package io.macfleet.mdm;

import java.util.Objects;
import java.util.Optional;

/**
 * What a write did on the server. KMFDDM answers 204 when it stored something new or different (and then sends the
 * DeclarativeManagement sync to the affected devices by itself) and 304 when nothing changed (no sync). A campaign
 * that resumes after a crash relies on this: writing the same declaration again is {@link #UNCHANGED} and reaches no
 * device twice.
 *
 * @param pushError why the push failed, for {@link Kind#CHANGED_PUSH_FAILED}
 */
public record Change(Kind kind, Optional<String> pushError) {

    public enum Kind {
        CHANGED, UNCHANGED,
        /**
         * Stored and the sync command queued, but the server could not push (NanoHUB answers 500 with a push error,
         * e.g. an expired or missing push certificate). The device gets the change at its next check-in; writing it
         * again is {@link #UNCHANGED}, so nothing is queued twice.
         */
        CHANGED_PUSH_FAILED
    }

    public static final Change CHANGED = new Change(Kind.CHANGED, Optional.empty());
    public static final Change UNCHANGED = new Change(Kind.UNCHANGED, Optional.empty());

    public Change {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(pushError, "pushError");
    }

    /** Stored and queued; the push failed for {@code why} (the server's words). */
    public static Change pushFailed(String why) {
        return new Change(Kind.CHANGED_PUSH_FAILED, Optional.of(why));
    }

    /** Whether the server now holds something it did not hold before. */
    public boolean changed() {
        return kind != Kind.UNCHANGED;
    }

    /** "queued, push failed: WHY" when the push failed, else empty. */
    public Optional<String> pushNote() {
        return pushError.map(why -> "queued, push failed: " + why);
    }
}
