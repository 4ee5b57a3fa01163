package io.macfleet.accounts;

import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.ext.web.RoutingContext;

/**
 * The session cookie: HttpOnly (scripts never see it), SameSite=Lax (sent when following a link to the console
 * from elsewhere, never on another site's form posts; the CSRF token covers the rest), Path=/, and Secure when the
 * request came over HTTPS, directly or through a reverse proxy Quarkus is told to trust
 * (quarkus.http.proxy.proxy-address-forwarding and allow-x-forwarded, which make X-Forwarded-Proto the scheme).
 * No Max-Age: the browser forgets it when it closes, the server ends it after the idle timeout or lifetime anyway.
 */
final class SessionCookies {

    /** The login form's own anti-forgery value (double-submit cookie), see {@link LoginResource}. */
    static final String LOGIN_COOKIE = "macfleet_login";

    private SessionCookies() {
    }

    static boolean https(RoutingContext context) {
        return context.request().isSSL() || "https".equalsIgnoreCase(context.request().scheme());
    }

    static Cookie session(RoutingContext context, String sessionId) {
        return Cookie.cookie(AccountsAuthenticationMechanism.SESSION_COOKIE, sessionId).setPath("/").setHttpOnly(true)
                .setSameSite(CookieSameSite.LAX).setSecure(https(context));
    }

    static Cookie cleared(RoutingContext context) {
        return Cookie.cookie(AccountsAuthenticationMechanism.SESSION_COOKIE, "").setPath("/").setHttpOnly(true)
                .setSameSite(CookieSameSite.LAX).setSecure(https(context)).setMaxAge(0);
    }

    static Cookie login(RoutingContext context, String value) {
        return Cookie.cookie(LOGIN_COOKIE, value).setPath("/login").setHttpOnly(true)
                .setSameSite(CookieSameSite.STRICT).setSecure(https(context)).setMaxAge(3600);
    }

    static Cookie loginCleared(RoutingContext context) {
        return Cookie.cookie(LOGIN_COOKIE, "").setPath("/login").setHttpOnly(true)
                .setSameSite(CookieSameSite.STRICT).setSecure(https(context)).setMaxAge(0);
    }
}
