package io.macfleet.accounts;

import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.IdentityProvider;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.runtime.QuarkusPrincipal;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.Optional;

/** Turns a session id or an API token into the identity of its account, with every role the account's role includes. */
@ApplicationScoped
class AccountsIdentityProvider implements IdentityProvider<AccountsAuthenticationRequest> {

    static final String VIA = "macfleet.via";
    static final String CSRF_TOKEN = "macfleet.csrf";
    static final String ROLE = "macfleet.role";

    @Inject
    AccountService accounts;

    @Override
    public Class<AccountsAuthenticationRequest> getRequestType() {
        return AccountsAuthenticationRequest.class;
    }

    @Override
    public Uni<SecurityIdentity> authenticate(AccountsAuthenticationRequest request, AuthenticationRequestContext context) {
        // The lookup reads the database: off the event loop.
        return context.runBlocking(() -> {
            Instant now = Instant.now();
            Optional<AccountStore.Credential> credential = request.kind() == AccountsAuthenticationRequest.Kind.SESSION
                    ? accounts.session(request.secret(), now)
                    : accounts.apiToken(request.secret(), now);
            AccountStore.Credential found = credential.orElseThrow(() -> new AuthenticationFailedException(
                    request.kind() == AccountsAuthenticationRequest.Kind.SESSION ? "session ended" : "unknown, revoked or expired API token"));
            QuarkusSecurityIdentity.Builder identity = QuarkusSecurityIdentity.builder()
                    .setPrincipal(new QuarkusPrincipal(found.user()))
                    .addRoles(found.role().grantedRoleNames())
                    .addAttribute(ROLE, found.role())
                    .addAttribute(VIA, request.kind() == AccountsAuthenticationRequest.Kind.SESSION ? "session" : "token");
            if (found.csrfToken() != null) {
                identity.addAttribute(CSRF_TOKEN, found.csrfToken());
            }
            return identity.build();
        });
    }
}
