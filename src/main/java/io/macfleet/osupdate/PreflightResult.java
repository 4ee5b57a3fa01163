package io.macfleet.osupdate;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The preflight answer for one machine: its current version and build (empty when they could not be read) and every
 * failed check. No findings means the machine may be updated.
 */
public record PreflightResult(String machine, Optional<String> osVersion, Optional<String> buildVersion,
                              List<PreflightFinding> findings) {

    public PreflightResult {
        Objects.requireNonNull(machine, "machine");
        Objects.requireNonNull(osVersion, "osVersion");
        Objects.requireNonNull(buildVersion, "buildVersion");
        findings = List.copyOf(findings);
    }

    public boolean passed() {
        return findings.isEmpty();
    }

    /** True when the machine already runs exactly {@code target}'s version and (when named) build. */
    public boolean alreadyOnTarget(io.macfleet.mdm.OsUpdateTarget target) {
        return osVersion.map(target.osVersion()::equals).orElse(false)
                && (target.buildVersion().isEmpty() || target.buildVersion().equals(buildVersion));
    }
}
