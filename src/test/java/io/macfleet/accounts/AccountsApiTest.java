package io.macfleet.accounts;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.macfleet.database.Jdbc;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Roles, API tokens, sessions and CSRF on the REST API, through real HTTP against the test database. */
@QuarkusTest
class AccountsApiTest {

    private static final String FAULT = "{\"machine\":\"studio-02\",\"fault\":\"hang\"}";

    @Inject
    AccountService accounts;

    @Inject
    DataSource dataSource;

    @AfterEach
    void forgetFailures() {
        TestAccounts.forgetFailedLogins();
    }

    @Test
    void withoutCredentialsTheApiAnswers401WithAProblemBody() {
        TestAccounts.user(Role.VIEWER);
        given().get("/api/v1/machines").then().statusCode(401)
                .contentType("application/problem+json")
                .header("WWW-Authenticate", containsString("Bearer"))
                .body("status", equalTo(401))
                .body("title", equalTo("Unauthorized"))
                .body("detail", containsString("API token"))
                .body("instance", equalTo("/api/v1/machines"));
        given().contentType("application/json").body(FAULT).post("/api/v1/simulator/faults").then().statusCode(401)
                .contentType("application/problem+json");
    }

    @Test
    void anUnknownOrMalformedTokenIs401() {
        given().header("Authorization", "Bearer mft_not-a-real-token").get("/api/v1/machines").then().statusCode(401)
                .contentType("application/problem+json")
                .body("detail", containsString("unknown, revoked or expired"));
        given().header("Authorization", "Basic YWRtaW46YWRtaW4=").get("/api/v1/machines").then().statusCode(401)
                .contentType("application/problem+json")
                .body("detail", containsString("only Bearer"));
    }

    @Test
    void aViewerReadsButMayNotAct() {
        TestAccounts.viewer().get("/api/v1/machines").then().statusCode(200);
        TestAccounts.viewer().contentType("application/json").body(FAULT).post("/api/v1/simulator/faults").then().statusCode(403)
                .contentType("application/problem+json")
                .body("status", equalTo(403))
                .body("detail", containsString("needs the role operator"));
        // Past the role check, the simulator says it is not running (no demo in this test): the operator got through.
        TestAccounts.operator().contentType("application/json").body(FAULT).post("/api/v1/simulator/faults").then().statusCode(404)
                .body("title", equalTo("Simulator not running"));
        TestAccounts.admin().contentType("application/json").body(FAULT).post("/api/v1/simulator/faults").then().statusCode(404);
    }

    @Test
    void aViewerSessionMayNotActEitherEvenWithItsCsrfToken() {
        TestAccounts.Session viewer = TestAccounts.login(Role.VIEWER);
        viewer.request().get("/api/v1/machines").then().statusCode(200);
        viewer.request().contentType("application/json").body(FAULT).post("/api/v1/simulator/faults").then().statusCode(403)
                .body("detail", containsString("needs the role operator"));
    }

    @Test
    void sessionRequestsThatChangeStateNeedTheCsrfTokenTokenRequestsDoNot() {
        TestAccounts.Session operator = TestAccounts.login(Role.OPERATOR);
        operator.withoutCsrf().contentType("application/json").body(FAULT).post("/api/v1/simulator/faults").then().statusCode(403)
                .contentType("application/problem+json")
                .body("detail", containsString("missing CSRF token"));
        operator.withoutCsrf().header(CurrentUser.CSRF_HEADER, "forged").contentType("application/json").body(FAULT)
                .post("/api/v1/simulator/faults").then().statusCode(403)
                .body("detail", containsString("wrong CSRF token"));
        // The same requests with the session's token, as a header or a form field, pass (and reach the simulator).
        operator.request().contentType("application/json").body(FAULT).post("/api/v1/simulator/faults").then().statusCode(404);
        // With an API token there is no ambient credential, so no CSRF token is asked for.
        TestAccounts.operator().contentType("application/json").body(FAULT).post("/api/v1/simulator/faults").then().statusCode(404);
        // Reads need none.
        operator.withoutCsrf().get("/api/v1/machines").then().statusCode(200);
        // A form post carries it as the _csrf field: logging out without it or with a wrong one is refused too.
        operator.withoutCsrf().post("/logout").then().statusCode(403).body("detail", containsString("missing CSRF token"));
        operator.withoutCsrf().formParam(CurrentUser.CSRF_FIELD, "forged").post("/logout").then().statusCode(403)
                .body("detail", containsString("wrong CSRF token"));
        operator.withoutCsrf().get("/api/v1/machines").then().statusCode(200);
        operator.withoutCsrf().formParam(CurrentUser.CSRF_FIELD, operator.csrfToken()).post("/logout").then().statusCode(303);
        operator.withoutCsrf().get("/api/v1/machines").then().statusCode(401);
    }

    @Test
    void aRevokedTokenStopsWorkingAtOnce() {
        String user = TestAccounts.user(Role.VIEWER);
        AccountService.IssuedToken issued = accounts.createToken(user, "revoke-me", null, "test");
        given().header("Authorization", "Bearer " + issued.token()).get("/api/v1/machines").then().statusCode(200);
        accounts.revokeToken(issued.id(), "test");
        given().header("Authorization", "Bearer " + issued.token()).get("/api/v1/machines").then().statusCode(401)
                .body("detail", containsString("unknown, revoked or expired"));
    }

    @Test
    void anExpiredTokenOrADisabledUsersTokenIsRefused() throws Exception {
        accounts.addUser("short-lived", Role.VIEWER, TestAccounts.PASSWORD, "test");
        AccountService.IssuedToken issued = accounts.createToken("short-lived", "brief", java.time.Duration.ofMillis(300), "test");
        given().header("Authorization", "Bearer " + issued.token()).get("/api/v1/machines").then().statusCode(200);
        Thread.sleep(400);
        given().header("Authorization", "Bearer " + issued.token()).get("/api/v1/machines").then().statusCode(401);

        AccountService.IssuedToken second = accounts.createToken("short-lived", "second", null, "test");
        accounts.setDisabled("short-lived", true, "test");
        given().header("Authorization", "Bearer " + second.token()).get("/api/v1/machines").then().statusCode(401);
        accounts.setDisabled("short-lived", false, "test");
        given().header("Authorization", "Bearer " + second.token()).get("/api/v1/machines").then().statusCode(200);
    }

    @Test
    void onlyHashesAreStored() {
        String user = TestAccounts.user(Role.OPERATOR);
        AccountService.IssuedToken issued = accounts.createToken(user, "hash-check", null, "test");
        TestAccounts.Session session = TestAccounts.login(Role.OPERATOR);
        List<String> passwordHashes = Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select password_hash from account_user where name = ?", row -> row.getString(1), user));
        assertThat(passwordHashes).singleElement().satisfies(hash -> {
            assertThat(hash).startsWith("$2").doesNotContain(TestAccounts.PASSWORD);
            assertThat(Passwords.matches(TestAccounts.PASSWORD, hash)).isTrue();
            assertThat(Passwords.matches(TestAccounts.PASSWORD + "x", hash)).isFalse();
        });
        List<String> tokenHashes = Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select token_hash from api_token where id = ?", row -> row.getString(1), issued.id()));
        assertThat(tokenHashes).containsExactly(Secrets.hash(issued.token()));
        assertThat(tokenHashes.getFirst()).doesNotContain(issued.token().substring(Secrets.TOKEN_PREFIX.length()));
        List<String> sessionIds = Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select id_hash from account_session where user_name = ?", row -> row.getString(1), user));
        assertThat(sessionIds).contains(Secrets.hash(session.cookie())).doesNotContain(session.cookie());
    }

    @Test
    void consolePagesSendBrowsersToTheLoginPage() {
        TestAccounts.user(Role.VIEWER);
        given().redirects().follow(false).get("/console/clusters/llm-a?tab=cabling").then().statusCode(303)
                .header("Location", equalTo("/login?next=%2Fconsole%2Fclusters%2Fllm-a%3Ftab%3Dcabling"));
        given().redirects().follow(false).header("HX-Request", "true").get("/account").then().statusCode(401)
                .header("HX-Redirect", equalTo("/login?next=%2Faccount"));
        given().redirects().follow(false).get("/account").then().statusCode(303).header("Location", equalTo("/login?next=%2Faccount"));
        // The style sheet stays public: the login page needs it.
        given().get("/console/static/macfleet.css").then().statusCode(200);
        // Any other API path needs credentials too, existing or not.
        given().get("/api/v1/no-such-thing").then().statusCode(401).contentType("application/problem+json");
    }

    @Test
    void consolePagesAnswerWithPagesForALowRoleAndCheckTheFormsCsrfField() {
        TestAccounts.Session viewer = TestAccounts.login(Role.VIEWER);
        viewer.withoutCsrf().get("/console/test/operator-only").then().statusCode(403).contentType(containsString("text/html"))
                .body(containsString("signed in as " + viewer.user() + " with role viewer; this needs the role operator"));
        TestAccounts.Session operator = TestAccounts.login(Role.OPERATOR);
        operator.withoutCsrf().get("/console/test/operator-only").then().statusCode(200).body(containsString("operator page for " + operator.user()));
        operator.withoutCsrf().formParam("what", "confirm").post("/console/test/operator-only").then().statusCode(403)
                .contentType("application/problem+json").body("detail", containsString("missing CSRF token"));
        operator.withoutCsrf().formParam("what", "confirm").formParam(CurrentUser.CSRF_FIELD, operator.csrfToken() + "x")
                .post("/console/test/operator-only").then().statusCode(403);
        operator.withoutCsrf().formParam("what", "confirm").formParam(CurrentUser.CSRF_FIELD, operator.csrfToken())
                .post("/console/test/operator-only").then().statusCode(200).body(containsString(operator.user() + " did confirm"));
        viewer.request().formParam("what", "confirm").post("/console/test/operator-only").then().statusCode(403);
        given().redirects().follow(false).get("/console/test/operator-only").then().statusCode(303)
                .header("Location", equalTo("/login?next=%2Fconsole%2Ftest%2Foperator-only"));
    }
}
