package io.macfleet.mdm;

import java.time.Instant;
import java.util.Optional;

/**
 * One value the server extracted from a device's status reports: a path such as
 * {@code .StatusItems.device.operating-system.build-version} and its value as text.
 */
public record StatusValue(String enrollmentId, String path, String value, Optional<Instant> timestamp) {
}
