package io.macfleet.accounts;

import io.vertx.core.http.Cookie;
import io.vertx.ext.web.RoutingContext;
import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The login page, signing in and out, and a small page showing who is signed in.
 *
 * <p>The login form cannot carry a session's CSRF token (there is no session yet), yet a forged login (another site
 * posting its own credentials so that the victim works in the attacker's account) must be refused. Two checks:
 * <ol>
 * <li>a double-submit value: GET /login sets a random value in a cookie (HttpOnly, SameSite=Strict, Path=/login)
 * and in the form's hidden _csrf field; POST /login needs both, equal. Another site can neither read the value nor
 * make the browser send a SameSite=Strict cookie with its cross-site post;</li>
 * <li>the Origin header, which browsers send with every form post: when present it must name this host.</li>
 * </ol>
 * A signed double-submit token or a server-side pre-session would add nothing here: the value guards only a login.
 */
@Path("/")
@Produces(MediaType.TEXT_HTML)
public class LoginResource {

    /** Where a login goes when it was not sent from a page. */
    static final String DEFAULT_NEXT = "/console/";

    @Inject
    AccountService accounts;

    @Inject
    CurrentUser currentUser;

    @Inject
    RoutingContext routing;

    private static final java.util.concurrent.atomic.AtomicBoolean PROXY_WARNED = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * A login with X-Forwarded-For or Forwarded while Quarkus does not read them came through a reverse proxy that
     * macfleet does not trust: every client then has the proxy's address, which throttling counts. Said once, in
     * the service log, with the settings that fix it (docs/security.md, "Running behind TLS").
     */
    private void warnWhenBehindAnUntrustedProxy() {
        var headers = routing.request().headers();
        if ((headers.contains("X-Forwarded-For") || headers.contains("Forwarded"))
                && !org.eclipse.microprofile.config.ConfigProvider.getConfig()
                        .getOptionalValue("quarkus.http.proxy.proxy-address-forwarding", Boolean.class).orElse(false)
                && PROXY_WARNED.compareAndSet(false, true)) {
            org.jboss.logging.Logger.getLogger(LoginResource.class).warn("logins come through a reverse proxy (X-Forwarded-For or "
                    + "Forwarded headers) but quarkus.http.proxy.proxy-address-forwarding is off: every client has the proxy's "
                    + "address, so login throttling cannot tell clients apart. Set quarkus.http.proxy.proxy-address-forwarding=true, "
                    + "allow-x-forwarded=true and trusted-proxies (docs/security.md, Running behind TLS)");
        }
    }

    @GET
    @Path("login")
    @PermitAll
    public Response loginPage(@QueryParam("next") String next) {
        return page(200, safeNext(next), null, null);
    }

    @POST
    @Path("login")
    @PermitAll
    public Response login(@FormParam("username") String username, @FormParam("password") String password,
            @FormParam("next") String next, @FormParam("_csrf") String formToken) {
        String target = safeNext(next);
        Cookie cookie = routing.request().getCookie(SessionCookies.LOGIN_COOKIE);
        if (cookie == null || !Secrets.sameSecret(cookie.getValue(), formToken) || !sameOrigin()) {
            return page(403, target, null, "The login form expired or was sent from another site. Please sign in again.");
        }
        if (!accounts.hasAccounts()) {
            return page(401, target, null, null);
        }
        String address = routing.request().remoteAddress() == null ? "unknown" : routing.request().remoteAddress().hostAddress();
        warnWhenBehindAnUntrustedProxy();
        LoginOutcome outcome = accounts.login(username, password, address, Instant.now());
        return switch (outcome) {
            case LoginOutcome.SignedIn signedIn -> {
                routing.response().addCookie(SessionCookies.session(routing, signedIn.sessionId()));
                routing.response().addCookie(SessionCookies.loginCleared(routing));
                yield Response.seeOther(URI.create(target)).header("Cache-Control", "no-store").build();
            }
            case LoginOutcome.Refused refused -> page(401, target, username, refused.message());
            case LoginOutcome.Throttled throttled -> Response.fromResponse(page(429, target, username, throttled.message()))
                    .header("Retry-After", Math.max(1, throttled.retryAfter().toSeconds())).build();
        };
    }

    /** Ends the session on the server (the cookie alone would not: a copied cookie must stop working too). */
    @POST
    @Path("logout")
    @PermitAll
    public Response logout() {
        Cookie cookie = routing.request().getCookie(AccountsAuthenticationMechanism.SESSION_COOKIE);
        if (cookie != null && !cookie.getValue().isEmpty()) {
            accounts.logout(cookie.getValue(), currentUser.actor());
        }
        routing.response().addCookie(SessionCookies.cleared(routing));
        return Response.seeOther(URI.create("/login?signedOut=true")).header("Cache-Control", "no-store").build();
    }

    @GET
    @Path("account")
    @RolesAllowed(Roles.VIEWER)
    public String account() {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("user", currentUser.name());
        data.put("role", currentUser.roleName());
        data.put("via", currentUser.authenticatedBy());
        data.put("csrf", currentUser.csrfToken());
        data.put("canOperate", currentUser.canOperate());
        data.put("canAdminister", currentUser.canAdminister());
        return Pages.render("account", data);
    }

    private Response page(int status, String next, String username, String message) {
        Map<String, Object> data = new LinkedHashMap<>();
        boolean hasAccounts = accounts.hasAccounts();
        data.put("hasAccounts", hasAccounts);
        data.put("noAccounts", AccountService.NO_ACCOUNTS_YET);
        data.put("next", next);
        data.put("username", username == null ? "" : username);
        data.put("message", message == null ? "" : message);
        data.put("signedOut", routing.request().getParam("signedOut") != null && message == null);
        data.put("signedIn", currentUser.authenticated());
        data.put("user", currentUser.name());
        data.put("role", currentUser.roleName());
        data.put("csrf", currentUser.csrfToken());
        String formToken = Secrets.randomToken();
        data.put("loginToken", formToken);
        routing.response().addCookie(SessionCookies.login(routing, formToken));
        return Response.status(status).type(MediaType.TEXT_HTML_TYPE.withCharset("UTF-8")).header("Cache-Control", "no-store")
                .entity(Pages.render("login", data)).build();
    }

    /** Browsers send Origin with form posts; when there is one, its host must be the host this request was sent to. */
    private boolean sameOrigin() {
        String origin = routing.request().getHeader("Origin");
        if (origin == null) {
            return true;
        }
        String host = routing.request().getHeader("Host");
        try {
            URI uri = new URI(origin);
            if (uri.getHost() == null || host == null) {
                return false;
            }
            String authority = uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort());
            return authority.equalsIgnoreCase(host) || (uri.getPort() < 0 && host.equalsIgnoreCase(uri.getHost() + ":" + defaultPort(uri.getScheme())));
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static int defaultPort(String scheme) {
        return "https".equalsIgnoreCase(scheme) ? 443 : 80;
    }

    /**
     * Only a path on this server: starts with one slash, no scheme, no host, no backslash or control characters
     * (browsers read "/\evil.example" and "//evil.example" as other hosts). Anything else goes to the console.
     */
    static String safeNext(String next) {
        if (next == null || next.isEmpty() || !next.startsWith("/") || next.startsWith("//") || next.contains("\\")
                || next.chars().anyMatch(c -> c < 0x21 || c == 0x7f)) {
            return DEFAULT_NEXT;
        }
        try {
            URI uri = new URI(next);
            if (uri.getScheme() != null || uri.getRawAuthority() != null || uri.getRawPath() == null
                    || uri.getRawPath().startsWith("/login") || uri.getRawPath().startsWith("/logout")) {
                return DEFAULT_NEXT;
            }
        } catch (URISyntaxException e) {
            return DEFAULT_NEXT;
        }
        return next;
    }
}
