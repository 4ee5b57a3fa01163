package io.macfleet.facts;

import java.time.Instant;
import java.util.Optional;

/**
 * How reaching one machine went lately.
 *
 * @param lastAttemptAt when macfleet last tried to gather its facts
 * @param lastSeenAt when it last answered over SSH (empty: never)
 * @param unreachableSince since when every attempt failed to reach it (empty while it answers)
 * @param lastError why the last attempt failed (empty when it succeeded)
 * @param observedBy who made the last attempt ({@code service:HOST}, {@code cli:USER})
 */
public record Reachability(String machine, Instant lastAttemptAt, Optional<Instant> lastSeenAt, Optional<Instant> unreachableSince,
                           Optional<String> lastError, String observedBy) {

    public boolean reachable() {
        return unreachableSince.isEmpty();
    }
}
