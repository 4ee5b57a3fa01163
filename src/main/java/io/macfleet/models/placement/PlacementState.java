package io.macfleet.models.placement;

import java.util.Locale;

/** Where a recorded placement stands (stored by name in {@code model_placement.state}). */
public enum PlacementState {
    /** Its process refreshed the heartbeat lately. */
    RUNNING,
    /** Ended with a report: every Mac's outcome is known (the report says whether all succeeded). */
    DONE,
    /** Refused or broken before a report (the error says why). */
    FAILED,
    /** Stored as running, but its process stopped refreshing it (macfleet restarted or was killed): it runs no more. */
    INTERRUPTED;

    /** As the API and console show it: {@code running}, {@code done}, {@code failed}, {@code interrupted}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
