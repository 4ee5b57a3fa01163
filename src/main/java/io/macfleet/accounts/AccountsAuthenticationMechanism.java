package io.macfleet.accounts;

import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.IdentityProviderManager;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.AuthenticationRequest;
import io.quarkus.vertx.http.runtime.security.ChallengeData;
import io.quarkus.vertx.http.runtime.security.HttpAuthenticationMechanism;
import io.quarkus.vertx.http.runtime.security.HttpSecurityUtils;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.http.Cookie;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Set;

/**
 * Authenticates a request by {@code Authorization: Bearer <API token>} or, failing that, by the session cookie
 * set at login. No credentials: anonymous (resources then answer 401 or send browsers to /login). A session
 * cookie that no longer matches a live session is cleared and the request is anonymous; a bad API token is a 401.
 */
@ApplicationScoped
class AccountsAuthenticationMechanism implements HttpAuthenticationMechanism {

    static final String SESSION_COOKIE = "macfleet_session";
    static final String BAD_TOKEN = "macfleet.bad-token";

    @Inject
    AccountService accounts;

    @Override
    public Uni<SecurityIdentity> authenticate(RoutingContext context, IdentityProviderManager identityProviderManager) {
        String authorization = context.request().getHeader("Authorization");
        if (authorization != null) {
            if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
                context.put(BAD_TOKEN, "only Bearer API tokens are accepted in the Authorization header");
                return Uni.createFrom().failure(new AuthenticationFailedException("unsupported authorization scheme"));
            }
            var request = new AccountsAuthenticationRequest(AccountsAuthenticationRequest.Kind.TOKEN, authorization.substring(7).strip());
            return identityProviderManager.authenticate(HttpSecurityUtils.setRoutingContextAttribute(request, context))
                    .onFailure(AuthenticationFailedException.class).invoke(() ->
                            context.put(BAD_TOKEN, "the API token is unknown, revoked or expired (create one with `macfleet tokens create`)"));
        }
        Cookie cookie = context.request().getCookie(SESSION_COOKIE);
        if (cookie != null && !cookie.getValue().isEmpty()) {
            var request = new AccountsAuthenticationRequest(AccountsAuthenticationRequest.Kind.SESSION, cookie.getValue());
            return identityProviderManager.authenticate(HttpSecurityUtils.setRoutingContextAttribute(request, context))
                    .onFailure(AuthenticationFailedException.class).recoverWithItem(() -> {
                        context.response().addCookie(SessionCookies.cleared(context));
                        return null;
                    });
        }
        return Uni.createFrom().nullItem();
    }

    @Override
    public Uni<ChallengeData> getChallenge(RoutingContext context) {
        return Uni.createFrom().item(new ChallengeData(401, "WWW-Authenticate", "Bearer realm=\"macfleet\""));
    }

    /** The whole answer, not just a status: a problem JSON body for the API, the login page for browsers. */
    @Override
    public Uni<Boolean> sendChallenge(RoutingContext context) {
        // Whether any account exists is a database read: off the event loop.
        return Uni.createFrom().item(() -> accounts.hasAccounts())
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .map(hasAccounts -> {
                    SecurityAnswers.unauthenticated(context, hasAccounts, context.get(BAD_TOKEN));
                    return true;
                });
    }

    @Override
    public Set<Class<? extends AuthenticationRequest>> getCredentialTypes() {
        return Set.of(AccountsAuthenticationRequest.class);
    }
}
