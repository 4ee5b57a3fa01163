package io.macfleet.osupdate;

import java.time.Duration;
import java.util.Objects;

/**
 * How long a machine may stay in each phase before the campaign marks it failed (each phase has its own slot; a
 * resumed campaign starts the slot of the current phase again).
 *
 * @param waiting sent, until the Mac starts downloading (a target Apple does not offer for the model stays here)
 * @param prepared downloaded, until it installs (the install time plus a margin)
 */
public record PhaseDeadlines(Duration waiting, Duration downloading, Duration prepared, Duration installing, Duration restarting) {

    /** Real Macs: downloads of several GB, a preparation of tens of minutes, a restart of up to half an hour. */
    public static final PhaseDeadlines DEFAULTS = new PhaseDeadlines(Duration.ofMinutes(30), Duration.ofHours(2), Duration.ofHours(2),
            Duration.ofHours(1), Duration.ofMinutes(30));

    public PhaseDeadlines {
        Objects.requireNonNull(waiting);
        Objects.requireNonNull(downloading);
        Objects.requireNonNull(prepared);
        Objects.requireNonNull(installing);
        Objects.requireNonNull(restarting);
    }

    public static PhaseDeadlines all(Duration each) {
        return new PhaseDeadlines(each, each, each, each, each);
    }

    Duration of(MachinePhase phase) {
        return switch (phase) {
            case DOWNLOADING -> downloading;
            case PREPARED -> prepared;
            case INSTALLING -> installing;
            case RESTARTING -> restarting;
            default -> waiting;
        };
    }
}
