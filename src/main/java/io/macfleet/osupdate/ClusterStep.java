package io.macfleet.osupdate;

import java.util.Locale;

/** The steps of one cluster in a campaign, in order; FAILED keeps the step it failed at beside it. */
enum ClusterStep {
    PENDING, PREFLIGHT, DRAINING, UPDATING, VERIFYING, UNDRAINING, DONE, FAILED;

    String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    static ClusterStep of(String wire) {
        return valueOf(wire.toUpperCase(Locale.ROOT));
    }
}
