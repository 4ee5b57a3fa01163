package io.macfleet.osupdate;

import java.util.Objects;
import java.util.Optional;

/**
 * Where one machine is on its way to the target, as {@link UpdateMethod#progress} read it.
 *
 * @param osVersion the version the machine reports now (empty when not read)
 * @param buildVersion the build the machine reports now (empty when not read)
 * @param failure the reason, for {@link Phase#FAILED} only
 * @param detail a short human text of what was seen (e.g. "install-state downloading, pending 26.2 (25C56)")
 */
public record UpdateProgress(Phase phase, Optional<String> osVersion, Optional<String> buildVersion,
                             Optional<String> failure, String detail) {

    /** The phases a campaign shows and puts deadlines on, in order; FAILED and UNKNOWN can come at any point. */
    public enum Phase {
        /** Nothing started yet on the machine (or it has not reported since). */
        WAITING,
        DOWNLOADING,
        /** Downloaded and prepared; waiting for the install time. */
        PREPARED,
        INSTALLING,
        /** Installing finished and the machine is restarting (or unreachable right after the install). */
        RESTARTING,
        /** Exactly on the target version and build. */
        DONE,
        FAILED,
        /** Nothing could be read now (unreachable, server down); see detail. */
        UNKNOWN;

        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public UpdateProgress {
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(osVersion, "osVersion");
        Objects.requireNonNull(buildVersion, "buildVersion");
        Objects.requireNonNull(failure, "failure");
        Objects.requireNonNull(detail, "detail");
    }

    public static UpdateProgress failed(String reason, Optional<String> osVersion, Optional<String> buildVersion) {
        return new UpdateProgress(Phase.FAILED, osVersion, buildVersion, Optional.of(reason), reason);
    }

    public static UpdateProgress unknown(String detail) {
        return new UpdateProgress(Phase.UNKNOWN, Optional.empty(), Optional.empty(), Optional.empty(), detail);
    }
}
