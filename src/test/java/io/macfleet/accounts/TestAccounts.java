package io.macfleet.accounts;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.arc.Arc;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Accounts for tests that call the REST API or the console, inside a {@code @QuarkusTest}: users
 * {@code test-viewer}, {@code test-operator} and {@code test-admin} (password {@link #PASSWORD}) are created in
 * the test database on first use.
 *
 * <pre>{@code
 * TestAccounts.viewer().get("/api/v1/machines").then().statusCode(200);       // API token of test-viewer
 * TestAccounts.operator().contentType("application/json").body(...).post(...);  // API token of test-operator
 * TestAccounts.Session session = TestAccounts.login(Role.OPERATOR);             // signed in through POST /login
 * session.request().formParam("x", "y").post("/console/...");                  // cookie + X-CSRF-Token header
 * }</pre>
 */
public final class TestAccounts {

    /** The password of every test user. */
    public static final String PASSWORD = "correct horse battery staple";

    private static final Map<Role, String> TOKENS = new ConcurrentHashMap<>();

    private TestAccounts() {
    }

    /** A browser-like session: the session cookie and its CSRF token. */
    public record Session(String user, String cookie, String csrfToken) {
        /** A request carrying the session cookie and the CSRF header, as htmx sends it. */
        public RequestSpecification request() {
            return withoutCsrf().header(CurrentUser.CSRF_HEADER, csrfToken);
        }

        /** A request carrying only the session cookie (what a forged cross-site request would carry). */
        public RequestSpecification withoutCsrf() {
            return given().redirects().follow(false).cookie(AccountsAuthenticationMechanism.SESSION_COOKIE, cookie);
        }
    }

    /** The name of the test user with this role (created if missing): test-viewer, test-operator, test-admin. */
    public static String user(Role role) {
        String name = "test-" + role.id();
        AccountService accounts = service();
        if (accounts.user(name).isEmpty()) {
            try {
                accounts.addUser(name, role, PASSWORD, "test");
            } catch (AccountException alreadyAddedByAnotherThread) {
                assertThat(accounts.user(name)).isPresent();
            }
        }
        return name;
    }

    /** An API token of the test user with this role (one per role, created on first use). */
    public static String token(Role role) {
        return TOKENS.computeIfAbsent(role, r -> service().createToken(user(r), "test-" + System.nanoTime(), null, "test").token());
    }

    /** A REST Assured request authenticated with the API token of the test user with this role. */
    public static RequestSpecification as(Role role) {
        return given().header("Authorization", "Bearer " + token(role));
    }

    public static RequestSpecification viewer() {
        return as(Role.VIEWER);
    }

    public static RequestSpecification operator() {
        return as(Role.OPERATOR);
    }

    public static RequestSpecification admin() {
        return as(Role.ADMIN);
    }

    /** Signs the test user with this role in through the login form (GET /login, POST /login). */
    public static Session login(Role role) {
        String user = user(role);
        return login(user, PASSWORD);
    }

    /** Signs in through the login form; fails the test unless the login succeeds. */
    public static Session login(String user, String password) {
        Response response = postLogin(user, password, "/account");
        assertThat(response.statusCode()).as("POST /login as " + user + ": " + response.body().asString()).isEqualTo(303);
        String cookie = response.cookie(AccountsAuthenticationMechanism.SESSION_COOKIE);
        assertThat(cookie).isNotBlank();
        String csrf = Arc.container().instance(AccountStore.class).get().session(Secrets.hash(cookie)).orElseThrow().csrfToken();
        return new Session(user, cookie, csrf);
    }

    /** The login form as a browser sends it: the form's anti-forgery cookie and field from GET /login, then the post. */
    public static Response postLogin(String user, String password, String next) {
        Response page = given().get("/login");
        String loginCookie = page.cookie(SessionCookies.LOGIN_COOKIE);
        java.util.regex.Matcher field = java.util.regex.Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"").matcher(page.body().asString());
        assertThat(field.find()).as("the login form's _csrf field in " + page.body().asString()).isTrue();
        return given().redirects().follow(false).cookie(SessionCookies.LOGIN_COOKIE, loginCookie)
                .formParam("username", user).formParam("password", password).formParam("next", next).formParam("_csrf", field.group(1))
                .post("/login");
    }

    /** Forgets failed logins, so that one test's throttling does not refuse the next test's logins (all come from 127.0.0.1). */
    public static void forgetFailedLogins() {
        Arc.container().instance(AccountStore.class).get().deleteFailuresBefore(java.time.Instant.now().plusSeconds(3600));
    }

    private static AccountService service() {
        return Arc.container().instance(AccountService.class).get();
    }
}
