package io.macfleet.simulator.mdm;

import io.macfleet.simulator.MacosRelease;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What Apple offers each model (the simulator's stand-in for GDMF, gdmf.apple.com/v2/pmv): by default every release
 * the simulator knows, for every model. {@link #withhold} takes a release away from one model, which makes an
 * enforcement of it "active but idle" on that Mac, as Apple documents for a target without a matching update.
 */
public final class UpdateCatalog {
    private final Set<String> withheld = ConcurrentHashMap.newKeySet();

    public void withhold(String modelIdentifier, String osVersion) {
        withheld.add(modelIdentifier + "|" + osVersion);
    }

    /** The release a Mac of this model would install for the target, if Apple offers one. */
    public Optional<MacosRelease> offered(String modelIdentifier, String osVersion, Optional<String> build) {
        if (withheld.contains(modelIdentifier + "|" + osVersion)) {
            return Optional.empty();
        }
        return MacosRelease.KNOWN.stream().filter(release -> release.version().equals(osVersion))
                .filter(release -> build.isEmpty() || build.get().equals(release.build())).findFirst();
    }
}
