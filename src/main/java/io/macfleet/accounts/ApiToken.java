package io.macfleet.accounts;

import java.time.Instant;

/** An API token as listed (never the token itself: only its hash is stored). */
record ApiToken(long id, String user, String name, Instant created, Instant lastUsed, Instant expires) {

    boolean expired(Instant now) {
        return expires != null && !now.isBefore(expires);
    }
}
