package io.macfleet.accounts;

import java.time.Duration;
import java.time.Instant;

/** How a login attempt ended. */
sealed interface LoginOutcome {

    /** Signed in: the session id goes into the cookie, never anywhere else. */
    record SignedIn(Account account, String sessionId, String csrfToken, Instant expires) implements LoginOutcome {
    }

    /** Wrong user name or password, or a disabled account: one message for all, so names cannot be probed. */
    record Refused(String message) implements LoginOutcome {
    }

    /** Too many failed attempts for this name or from this address: nothing was checked. */
    record Throttled(Duration retryAfter) implements LoginOutcome {
        String message() {
            long seconds = Math.max(1, retryAfter.toSeconds() + (retryAfter.toMillisPart() > 0 ? 1 : 0));
            return "Too many failed login attempts for this user name or from this address. Try again in "
                    + (seconds < 120 ? seconds + " seconds" : (seconds + 59) / 60 + " minutes") + ".";
        }
    }
}
