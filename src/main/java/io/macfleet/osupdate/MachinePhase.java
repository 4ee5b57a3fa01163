package io.macfleet.osupdate;

import java.util.Locale;

/**
 * Where one machine of a campaign stands, as stored in {@code os_update_machine.phase}. The update phases
 * (WAITING..RESTARTING) are those {@link UpdateProgress.Phase} reports, each with its own deadline slot.
 */
enum MachinePhase {
    PENDING, CHECKED,
    /** Preflight found a problem on the machine. */
    BLOCKED,
    WAITING, DOWNLOADING, PREPARED, INSTALLING, RESTARTING,
    DONE, FAILED;

    String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    static MachinePhase of(String wire) {
        return valueOf(wire.toUpperCase(Locale.ROOT));
    }

    /** Still to be watched while the cluster updates. */
    boolean active() {
        return this != DONE && this != FAILED;
    }

    /** The phase a reported progress means; UNKNOWN (nothing could be read) keeps {@code current}. */
    static MachinePhase reported(UpdateProgress.Phase progress, MachinePhase current) {
        return switch (progress) {
            case WAITING -> WAITING;
            case DOWNLOADING -> DOWNLOADING;
            case PREPARED -> PREPARED;
            case INSTALLING -> INSTALLING;
            case RESTARTING -> RESTARTING;
            case DONE -> DONE;
            case FAILED -> FAILED;
            case UNKNOWN -> current;
        };
    }
}
