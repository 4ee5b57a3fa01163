package io.macfleet.accounts;

import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Browser security headers on every answer (console pages, login, API, static files, errors): a strict
 * Content-Security-Policy (only the service's own scripts and styles, no inline script, nothing may frame the
 * console, forms post only to the service), plus X-Frame-Options for old browsers, nosniff and no Referer to other sites.
 * The console is built for it: htmx and console.js are static files, confirmations use data-confirm instead
 * of inline handlers, and htmx is told not to inject its indicator style element.
 */
@ApplicationScoped
public class SecurityHeaders {

    static final String CONTENT_SECURITY_POLICY = String.join("; ",
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'");

    /**
     * The Swagger UI page (/q/swagger-ui) starts itself with an inline script that Quarkus generates, so it gets inline
     * scripts and styles; nothing else changes, and it shows only the public API description.
     */
    static final String SWAGGER_UI_POLICY = CONTENT_SECURITY_POLICY.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'")
            .replace("style-src 'self'", "style-src 'self' 'unsafe-inline'");

    void install(@Observes Router router) {
        // Registered ahead of every other route, the headers are added just before any answer is written.
        router.route().order(Integer.MIN_VALUE).handler(context -> {
            context.addHeadersEndHandler(ignored -> {
                var headers = context.response().headers();
                headers.set("Content-Security-Policy", context.normalizedPath().startsWith("/q/swagger-ui")
                        ? SWAGGER_UI_POLICY : CONTENT_SECURITY_POLICY);
                headers.set("X-Frame-Options", "DENY");
                headers.set("X-Content-Type-Options", "nosniff");
                // same-origin, not no-referrer: with no-referrer browsers send "Origin: null" on form posts, which the login refuses.
                headers.set("Referrer-Policy", "same-origin");
                headers.set("Cross-Origin-Opener-Policy", "same-origin");
            });
            context.next();
        });
    }
}
