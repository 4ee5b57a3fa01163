package io.macfleet.accounts;

import java.time.Instant;

/** A local account as listed; the password hash stays in the store. */
public record Account(String name, Role role, Instant created, boolean disabled) {
}
