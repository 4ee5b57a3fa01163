package io.macfleet.accounts;

import io.quarkus.security.identity.SecurityIdentity;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.inject.Named;

/**
 * Who makes the current HTTP request, for pages and audit entries. Inject it ({@code @Inject CurrentUser user})
 * or use it in templates as {@code currentUser}. Anonymous requests have name "anonymous", no role and no CSRF
 * token.
 *
 * <p>Forms that change state send {@link #csrfToken()} as the hidden field {@value #CSRF_FIELD}; htmx sends it as
 * the header {@value #CSRF_HEADER}, e.g. {@code hx-headers='{"X-CSRF-Token": "..."}'} on the body element.
 */
@RequestScoped
@Named("currentUser")
public class CurrentUser {

    /** The form field that carries the CSRF token. */
    public static final String CSRF_FIELD = "_csrf";
    /** The request header that carries the CSRF token (htmx, fetch). */
    public static final String CSRF_HEADER = "X-CSRF-Token";

    @Inject
    SecurityIdentity identity;

    public boolean authenticated() {
        return !identity.isAnonymous();
    }

    /** The account name, or "anonymous". */
    public String name() {
        return identity.isAnonymous() ? "anonymous" : identity.getPrincipal().getName();
    }

    /** The account's role, or null when anonymous. */
    public Role role() {
        return identity.getAttribute(AccountsIdentityProvider.ROLE);
    }

    /** viewer, operator, admin, or "none". */
    public String roleName() {
        Role role = role();
        return role == null ? "none" : role.id();
    }

    /** True when the account's role includes {@code role}: {@code can(Role.OPERATOR)} for an admin too. */
    public boolean can(Role role) {
        Role own = role();
        return own != null && own.includes(role);
    }

    /** For templates: may run provisioning, confirm manual steps, inject simulator faults. */
    public boolean canOperate() {
        return can(Role.OPERATOR);
    }

    /** For templates: may manage accounts and apply the inventory. */
    public boolean canAdminister() {
        return can(Role.ADMIN);
    }

    /** The session's CSRF token, or "" for API tokens and anonymous requests (they need none). */
    public String csrfToken() {
        String token = identity.getAttribute(AccountsIdentityProvider.CSRF_TOKEN);
        return token == null ? "" : token;
    }

    /** "session", "token" or "none": how the request was authenticated. */
    public String authenticatedBy() {
        String via = identity.getAttribute(AccountsIdentityProvider.VIA);
        return via == null ? "none" : via;
    }

    /** The actor for audit entries: the account name, or "anonymous". */
    public String actor() {
        return name();
    }
}
