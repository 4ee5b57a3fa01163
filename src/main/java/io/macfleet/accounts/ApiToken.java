package io.macfleet.accounts;

import java.time.Instant;

/** An API token as listed (never the token itself: only its hash is stored). */
public record ApiToken(long id, String user, String name, Instant created, Instant lastUsed, Instant expires) {

    public boolean expired(Instant now) {
        return expires != null && !now.isBefore(expires);
    }
}
