package io.macfleet.accounts;

import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What an account may do. Each role includes the ones before it: an admin is also an operator, an operator
 * is also a viewer. The security identity of a request carries every role its account includes, so
 * {@code @RolesAllowed(Roles.OPERATOR)} admits operators and admins.
 */
public enum Role {
    /** Reads everything: fleet, facts, cabling, runs, audit log. */
    VIEWER,
    /** Also acts on machines: starts provisioning runs, confirms manual steps, injects simulator faults. */
    OPERATOR,
    /** Also manages accounts and applies the inventory. */
    ADMIN;

    /** The name used in the CLI, the database and {@code @RolesAllowed}: viewer, operator, admin. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** True when this role may do what {@code other} may do. */
    public boolean includes(Role other) {
        return ordinal() >= other.ordinal();
    }

    /** The role names a security identity of this role carries (this role and every role it includes). */
    Set<String> grantedRoleNames() {
        return Arrays.stream(values()).filter(this::includes).map(Role::id).collect(Collectors.toUnmodifiableSet());
    }

    /** Parses viewer, operator or admin (any case); the message names the accepted values. */
    public static Role parse(String text) {
        for (Role role : values()) {
            if (role.id().equalsIgnoreCase(text == null ? "" : text.strip())) {
                return role;
            }
        }
        throw new IllegalArgumentException("unknown role '" + text + "'; expected one of: viewer, operator, admin");
    }

    @Override
    public String toString() {
        return id();
    }
}
