package io.macfleet.accounts;

import io.quarkus.security.identity.SecurityIdentity;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.Set;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.WithFormRead;
import org.jboss.resteasy.reactive.server.core.ResteasyReactiveRequestContext;
import org.jboss.resteasy.reactive.server.spi.ResteasyReactiveContainerRequestContext;

/**
 * Every state-changing request authenticated by the session cookie must carry that session's CSRF token, as the
 * header X-CSRF-Token or the form field _csrf; otherwise 403 with a problem body. A browser sends the cookie on
 * its own (an ambient credential), so a cookie alone proves nothing about who wrote the request. Requests with an
 * API token are exempt: another site cannot make a browser send an Authorization header.
 * POST /login has its own check (there is no session yet), see {@link LoginResource}.
 */
class CsrfFilter {

    private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS");

    @Inject
    SecurityIdentity identity;

    @ServerRequestFilter
    @WithFormRead
    public void check(ResteasyReactiveContainerRequestContext request) {
        if (SAFE_METHODS.contains(request.getMethod()) || identity.isAnonymous()
                || !"session".equals(identity.getAttribute(AccountsIdentityProvider.VIA))) {
            return;
        }
        String path = request.getUriInfo().getPath();
        if (path.equals("/login")) {
            return;
        }
        String expected = identity.getAttribute(AccountsIdentityProvider.CSRF_TOKEN);
        String given = request.getHeaderString(CurrentUser.CSRF_HEADER);
        if (given == null) {
            Object field = ((ResteasyReactiveRequestContext) request.getServerRequestContext()).getFormParameter(CurrentUser.CSRF_FIELD, true, false);
            given = field == null ? null : field.toString();
        }
        if (!Secrets.sameSecret(expected, given)) {
            request.abortWith(SecurityAnswers.problem(403, "Forbidden", given == null
                            ? "missing CSRF token: send the session's token as the X-CSRF-Token header or the _csrf form field"
                            : "wrong CSRF token: reload the page and try again", path, Map.of()).response());
        }
    }
}
