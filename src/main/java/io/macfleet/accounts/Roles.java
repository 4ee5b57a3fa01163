package io.macfleet.accounts;

/**
 * Role names for {@code @RolesAllowed} on resources, e.g. {@code @RolesAllowed(Roles.OPERATOR)}. Roles nest
 * (see {@link Role}), so name the least role that may call the method.
 *
 * <p>Endpoints without any security annotation need {@link #VIEWER} (quarkus.security.jaxrs.default-roles-allowed);
 * every state-changing endpoint must name {@link #OPERATOR} or {@link #ADMIN} explicitly.
 */
public final class Roles {
    public static final String VIEWER = "viewer";
    public static final String OPERATOR = "operator";
    public static final String ADMIN = "admin";

    private Roles() {
    }
}
