package io.macfleet.mdm;

import java.time.Instant;
import java.util.Optional;

/**
 * What the MDM server knows about one enrollment. A server that does not expose a fact says so
 * ({@link BootstrapToken#NOT_EXPOSED_BY_SERVER}) instead of guessing: NanoHUB stores the bootstrap token but has no
 * API to read whether one is escrowed, so a preflight must then check on the Mac ({@code profiles status -type
 * bootstraptoken}).
 */
public record EnrollmentState(String enrollmentId, boolean declarativeStatusSeen, Optional<Instant> lastStatusReport,
                              BootstrapToken bootstrapToken) {

    public enum BootstrapToken {
        ESCROWED, NOT_ESCROWED, NOT_EXPOSED_BY_SERVER
    }
}
