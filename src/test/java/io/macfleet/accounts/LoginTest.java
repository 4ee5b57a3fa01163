package io.macfleet.accounts;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

import io.macfleet.audit.AuditEntry;
import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditQuery;
import io.macfleet.audit.JdbcAuditLog;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The login form, sessions, logout and throttling, through real HTTP; audit entries checked in the database. */
@QuarkusTest
class LoginTest {

    @Inject
    AccountService accounts;

    @Inject
    JdbcAuditLog audit;

    @AfterEach
    void forgetFailures() {
        TestAccounts.forgetFailedLogins();
    }

    private List<AuditEntry> audited(String actor, String action) {
        return audit.find(new AuditQuery(null, action, actor, null, 100));
    }

    @Test
    void signingInSetsAHardenedSessionCookieAndGoesToTheLocalNextPage() {
        String user = TestAccounts.user(Role.OPERATOR);
        Response response = TestAccounts.postLogin(user, TestAccounts.PASSWORD, "/account?tab=tokens");
        assertThat(response.statusCode()).isEqualTo(303);
        assertThat(response.header("Location")).endsWith("/account?tab=tokens");
        String setCookie = response.headers().getValues("Set-Cookie").stream()
                .filter(header -> header.startsWith(AccountsAuthenticationMechanism.SESSION_COOKIE + "=")).findFirst().orElseThrow();
        assertThat(setCookie.toLowerCase(java.util.Locale.ROOT)).contains("httponly", "samesite=lax", "path=/").doesNotContain("secure");
        String cookie = response.cookie(AccountsAuthenticationMechanism.SESSION_COOKIE);
        given().cookie(AccountsAuthenticationMechanism.SESSION_COOKIE, cookie).get("/account").then().statusCode(200)
                .body(containsString("Signed in as <strong class=\"user-name\" id=\"current-user\">" + user + "</strong>"))
                .body(containsString("role <strong id=\"current-role\">operator</strong>"));
        assertThat(audited(user, "login")).isNotEmpty().first().satisfies(entry ->
                assertThat(entry.event().outcome()).isEqualTo(AuditEvent.Outcome.SUCCESS));
    }

    @Test
    void aWrongPasswordOrUnknownUserGetsTheSameAnswer() {
        String user = TestAccounts.user(Role.VIEWER);
        Response wrongPassword = TestAccounts.postLogin(user, "not the password at all", "/account");
        Response unknownUser = TestAccounts.postLogin("nobody-here", "not the password at all", "/account");
        for (Response response : List.of(wrongPassword, unknownUser)) {
            assertThat(response.statusCode()).isEqualTo(401);
            assertThat(response.body().asString()).contains("Wrong user name or password.");
            assertThat(response.cookie(AccountsAuthenticationMechanism.SESSION_COOKIE)).isNull();
        }
        assertThat(audited(user, "login")).anySatisfy(entry -> {
            assertThat(entry.event().outcome()).isEqualTo(AuditEvent.Outcome.FAILURE);
            assertThat(entry.event().detail()).contains("wrong user name or password").doesNotContain("not the password");
        });
    }

    @Test
    void nextMayOnlyBeALocalPath() {
        assertThat(LoginResource.safeNext("/console/machines/studio-01?x=1")).isEqualTo("/console/machines/studio-01?x=1");
        for (String hostile : List.of("https://evil.example/", "//evil.example/", "/\\evil.example", "javascript:alert(1)", "/console\r\nSet-Cookie: x=y",
                "", "console", "/login", "/logout")) {
            assertThat(LoginResource.safeNext(hostile)).as(hostile).isEqualTo(LoginResource.DEFAULT_NEXT);
        }
        Response response = TestAccounts.postLogin(TestAccounts.user(Role.VIEWER), TestAccounts.PASSWORD, "//evil.example/steal");
        assertThat(response.statusCode()).isEqualTo(303);
        assertThat(response.header("Location")).endsWith("/console/").doesNotContain("evil");
    }

    @Test
    void aLoginPostWithoutTheFormsValueOrFromAnotherSiteIsRefused() {
        String user = TestAccounts.user(Role.VIEWER);
        given().redirects().follow(false).formParam("username", user).formParam("password", TestAccounts.PASSWORD).post("/login")
                .then().statusCode(403).body(containsString("expired or was sent from another site"));
        Response page = given().get("/login");
        String loginCookie = page.cookie(SessionCookies.LOGIN_COOKIE);
        String field = page.body().asString().replaceAll("(?s).*name=\"_csrf\" value=\"([^\"]+)\".*", "$1");
        given().redirects().follow(false).cookie(SessionCookies.LOGIN_COOKIE, loginCookie).header("Origin", "https://evil.example")
                .formParam("username", user).formParam("password", TestAccounts.PASSWORD).formParam("_csrf", field).post("/login")
                .then().statusCode(403);
        given().redirects().follow(false).cookie(SessionCookies.LOGIN_COOKIE, loginCookie).formParam("username", user)
                .formParam("password", TestAccounts.PASSWORD).formParam("_csrf", "guessed").post("/login").then().statusCode(403);
    }

    @Test
    void logoutEndsTheSessionOnTheServer() {
        TestAccounts.Session session = TestAccounts.login(Role.VIEWER);
        session.withoutCsrf().get("/account").then().statusCode(200);
        session.withoutCsrf().formParam(CurrentUser.CSRF_FIELD, session.csrfToken()).post("/logout").then().statusCode(303)
                .header("Location", containsString("/login"))
                .header("Set-Cookie", containsString("Max-Age=0"));
        // The old cookie, replayed (as a copied cookie would be), no longer opens anything.
        session.withoutCsrf().get("/account").then().statusCode(303).header("Location", equalTo("/login?next=%2Faccount"));
        session.withoutCsrf().get("/api/v1/machines").then().statusCode(401);
        assertThat(Secrets.hash(session.cookie())).satisfies(hash ->
                assertThat(io.quarkus.arc.Arc.container().instance(AccountStore.class).get().session(hash)).isEmpty());
        assertThat(audited(session.user(), "logout")).isNotEmpty();
    }

    @Test
    void aNewPasswordEndsTheUsersSessions() {
        accounts.addUser("rotating", Role.VIEWER, TestAccounts.PASSWORD, "test");
        TestAccounts.Session session = TestAccounts.login("rotating", TestAccounts.PASSWORD);
        session.withoutCsrf().get("/account").then().statusCode(200);
        accounts.setPassword("rotating", "another long password", "test");
        session.withoutCsrf().get("/account").then().statusCode(303);
        TestAccounts.login("rotating", "another long password");
    }

    @Test
    void repeatedFailuresThrottleEvenTheRightPasswordThenRelease() {
        accounts.addUser("throttled", Role.VIEWER, TestAccounts.PASSWORD, "test");
        for (int attempt = 1; attempt <= 5; attempt++) {
            assertThat(TestAccounts.postLogin("throttled", "wrong password " + attempt, "/account").statusCode()).isEqualTo(401);
        }
        Response refused = TestAccounts.postLogin("throttled", TestAccounts.PASSWORD, "/account");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.header("Retry-After")).isNotBlank();
        assertThat(refused.body().asString()).contains("Too many failed login attempts").contains("Try again in");
        assertThat(refused.cookie(AccountsAuthenticationMechanism.SESSION_COOKIE)).isNull();
        assertThat(audited("throttled", "login.throttled")).isNotEmpty();
        // A name that has not failed from this address is not held by the others' failures there (behind a proxy
        // that hides client addresses, every client has this address); an unknown one is refused like a wrong
        // password, so the answer tells nothing about existence.
        assertThat(TestAccounts.postLogin("never-existed", TestAccounts.PASSWORD, "/account").statusCode()).isEqualTo(401);
    }

    @Test
    void theDelayGrowsWithEachFailureAndEndsWithTheWindow() {
        accounts.addUser("slow-down", Role.VIEWER, TestAccounts.PASSWORD, "test");
        Instant start = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        String address = "192.0.2.7";
        for (int attempt = 0; attempt < 5; attempt++) {
            assertThat(accounts.login("slow-down", "wrong password", address, start.plusSeconds(attempt))).isInstanceOf(LoginOutcome.Refused.class);
        }
        // Fifth failure at start+4 s: 30 s wait.
        assertThat(accounts.login("slow-down", TestAccounts.PASSWORD, address, start.plusSeconds(10)))
                .isInstanceOfSatisfying(LoginOutcome.Throttled.class, throttled -> assertThat(throttled.retryAfter()).isEqualTo(Duration.ofSeconds(24)));
        // After the wait one more try: wrong again, and the next wait doubles to 60 s.
        assertThat(accounts.login("slow-down", "wrong password", address, start.plusSeconds(40))).isInstanceOf(LoginOutcome.Refused.class);
        assertThat(accounts.login("slow-down", TestAccounts.PASSWORD, address, start.plusSeconds(70)))
                .isInstanceOfSatisfying(LoginOutcome.Throttled.class, throttled -> assertThat(throttled.retryAfter()).isEqualTo(Duration.ofSeconds(30)));
        // Released: after the wait, the right password signs in, and the user's failures are forgotten.
        assertThat(accounts.login("slow-down", TestAccounts.PASSWORD, address, start.plusSeconds(101))).isInstanceOf(LoginOutcome.SignedIn.class);
        assertThat(accounts.throttled("slow-down", "198.51.100.1", start.plusSeconds(102))).isEmpty();
        // Failures older than the window no longer count at all.
        for (int attempt = 0; attempt < 5; attempt++) {
            accounts.login("slow-down", "wrong password", address, start.plusSeconds(200 + attempt));
        }
        assertThat(accounts.throttled("slow-down", address, start.plusSeconds(205))).isPresent();
        assertThat(accounts.throttled("slow-down", address, start.plusSeconds(204).plus(Duration.ofMinutes(15)))).isEmpty();
    }

    @Test
    void theLoginPageLinksTheConsoleStyleSheetAndNeedsNoScript() {
        given().get("/login").then().statusCode(200)
                .body(containsString("<link rel=\"stylesheet\" href=\"/console/static/console.css\">"))
                .body(containsString("<form method=\"post\" action=\"/login\""))
                .body(not(containsString("<script")));
        // The sheet it links is served to whoever is not signed in yet, and styles the login card.
        given().get("/console/static/console.css").then().statusCode(200).contentType("text/css").body(containsString("body.narrow main.card"));
    }
}
