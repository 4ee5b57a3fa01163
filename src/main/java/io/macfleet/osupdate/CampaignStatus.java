package io.macfleet.osupdate;

import java.util.Locale;

/** Where a whole campaign stands. */
public enum CampaignStatus {
    RUNNING, PAUSED, SUCCEEDED, FAILED;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static CampaignStatus of(String wire) {
        return valueOf(wire.toUpperCase(Locale.ROOT));
    }
}
