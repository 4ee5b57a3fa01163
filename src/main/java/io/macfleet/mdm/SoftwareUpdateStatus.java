package io.macfleet.mdm;

import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

/**
 * A device's OS-update state from its subscribed status items ({@code softwareupdate.install-state},
 * {@code .pending-version}, {@code .failure-reason}, {@code device.operating-system.version}, {@code .build-version}).
 * Each is empty when the device has not reported it (not subscribed yet, or not reported since the server started
 * keeping reports).
 */
public record SoftwareUpdateStatus(String enrollmentId, Optional<InstallState> installState, Optional<PendingVersion> pendingVersion,
                                   Optional<FailureReason> failureReason, Optional<String> osVersion, Optional<String> buildVersion) {

    /**
     * {@code softwareupdate.install-state}. Apple's rangelist is none, downloading, prepared, installing, failed; the
     * item's description also names waiting. A value a newer macOS may add is {@link #UNRECOGNIZED} rather than an
     * error, so a campaign can say what it saw instead of stopping on a parse failure.
     */
    public enum InstallState {
        NONE, WAITING, DOWNLOADING, PREPARED, INSTALLING, FAILED, UNRECOGNIZED;

        public static InstallState of(String wire) {
            try {
                return valueOf(wire.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                return UNRECOGNIZED;
            }
        }

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** {@code softwareupdate.pending-version}: both empty when nothing is pending. */
    public record PendingVersion(String osVersion, String buildVersion) {
        public boolean nothingPending() {
            return osVersion.isEmpty() && buildVersion.isEmpty();
        }
    }

    /** {@code softwareupdate.failure-reason}: count is 0 without failures; reason and timestamp are then absent. */
    public record FailureReason(int count, Optional<String> reason, Optional<Instant> timestamp) {
    }
}
