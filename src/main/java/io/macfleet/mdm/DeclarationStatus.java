package io.macfleet.mdm;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What one device last reported about one declaration (Apple's status item {@code management.declarations}, as the
 * server keeps it). {@code current} is the server's judgement: the device reported the server token the server
 * holds now, i.e. it has the latest revision.
 */
public record DeclarationStatus(String enrollmentId, String identifier, boolean active, Validity validity, String serverToken,
                                boolean current, Optional<Instant> statusReceived, List<StatusReason> reasons) {

    public DeclarationStatus {
        reasons = List.copyOf(reasons);
    }

    /** Apple's {@code valid} values: unknown, invalid, valid. */
    public enum Validity {
        VALID, INVALID, UNKNOWN;

        public static Validity of(String wire) {
            return switch (wire == null ? "" : wire) {
                case "valid" -> VALID;
                case "invalid" -> INVALID;
                default -> UNKNOWN;
            };
        }

        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Active and valid: the device applies it. */
    public boolean applied() {
        return active && validity == Validity.VALID;
    }
}
