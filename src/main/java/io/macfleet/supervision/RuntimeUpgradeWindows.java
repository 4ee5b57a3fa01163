package io.macfleet.supervision;

import io.macfleet.runtime.RuntimeService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Optional;

/** A cluster whose runtime is being upgraded (drained, then started on the new build) is down on purpose meanwhile. */
@ApplicationScoped
class RuntimeUpgradeWindows implements MaintenanceWindows {

    private final RuntimeService runtimes;

    @Inject
    RuntimeUpgradeWindows(RuntimeService runtimes) {
        this.runtimes = runtimes;
    }

    @Override
    public Optional<String> reason(String cluster) {
        return runtimes.upgrading(cluster);
    }
}
