package io.macfleet.mdm;

import java.time.LocalDateTime;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One exact macOS target for a group of Macs that must stay in lockstep: version ("26.2"), optionally the build
 * ("25C56"; with it every node lands on the same build, which exo/JACCL need) and the local time at which the Macs
 * install by force (Apple's {@code TargetLocalDateTime}: no offset, each Mac's own clock).
 */
public record OsUpdateTarget(String osVersion, Optional<String> buildVersion, LocalDateTime installBy) {
    private static final Pattern VERSION = Pattern.compile("\\d+(\\.\\d+){1,2}");
    private static final Pattern BUILD = Pattern.compile("\\d{2}[A-Z]\\d{1,5}[a-z]?");

    public OsUpdateTarget {
        Objects.requireNonNull(osVersion, "osVersion");
        Objects.requireNonNull(buildVersion, "buildVersion");
        Objects.requireNonNull(installBy, "installBy");
        if (!VERSION.matcher(osVersion).matches()) {
            throw new IllegalArgumentException("target macOS version '" + osVersion + "' is not a version like 26.2 or 26.2.1");
        }
        buildVersion.ifPresent(build -> {
            if (!BUILD.matcher(build).matches()) {
                throw new IllegalArgumentException("target build '" + build + "' is not a macOS build like 25C56 or 20A242a");
            }
        });
        installBy = installBy.withNano(0);
    }

    /** Apple's format: yyyy-mm-ddThh:mm:ss without offset. */
    public String targetLocalDateTime() {
        return installBy.format(java.time.format.DateTimeFormatter.ISO_LOCAL_DATE_TIME);
    }
}
