package io.macfleet.accounts;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Behind a TLS-terminating reverse proxy that Quarkus is told to trust, X-Forwarded-Proto: https makes the session
 * cookie Secure, and throttling counts failures per forwarded client address.
 */
@QuarkusTest
@TestProfile(ProxyTrustTest.TrustedProxy.class)
class ProxyTrustTest {

    public static class TrustedProxy implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.http.proxy.proxy-address-forwarding", "true", "quarkus.http.proxy.allow-x-forwarded", "true");
        }
    }

    @Test
    void forwardedHttpsMakesTheSessionCookieSecure() {
        String user = TestAccounts.user(Role.VIEWER);
        Response page = io.restassured.RestAssured.given().header("X-Forwarded-Proto", "https").get("/login");
        assertThat(page.headers().getValues("Set-Cookie")).anySatisfy(cookie ->
                assertThat(cookie.toLowerCase(java.util.Locale.ROOT)).startsWith(SessionCookies.LOGIN_COOKIE + "=").contains("secure"));
        String loginCookie = page.cookie(SessionCookies.LOGIN_COOKIE);
        String field = page.body().asString().replaceAll("(?s).*name=\"_csrf\" value=\"([^\"]+)\".*", "$1");
        Response login = io.restassured.RestAssured.given().redirects().follow(false).header("X-Forwarded-Proto", "https")
                .header("X-Forwarded-For", "203.0.113.9").cookie(SessionCookies.LOGIN_COOKIE, loginCookie)
                .formParam("username", user).formParam("password", TestAccounts.PASSWORD).formParam("_csrf", field).formParam("next", "/account")
                .post("/login");
        assertThat(login.statusCode()).isEqualTo(303);
        assertThat(login.headers().getValues("Set-Cookie")).anySatisfy(cookie -> assertThat(cookie.toLowerCase(java.util.Locale.ROOT))
                .startsWith(AccountsAuthenticationMechanism.SESSION_COOKIE + "=").contains("secure", "httponly", "samesite=lax"));
        assertThat(io.quarkus.arc.Arc.container().instance(io.macfleet.audit.JdbcAuditLog.class).get()
                .find(new io.macfleet.audit.AuditQuery(null, "login", user, null, 10)))
                .anySatisfy(entry -> assertThat(entry.event().detail()).isEqualTo("from 203.0.113.9"));
    }
}
