package io.macfleet.accounts;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;

/**
 * A service without accounts says how to create the first one (API and login page), and `macfleet demo` creates
 * one: admin with a random password in a file of mode 600, and a fresh API token for the demo subcommands at each
 * start. This class runs in its own JVM, so its database starts without accounts.
 */
@QuarkusTest
class DemoAccountTest {

    @Inject
    AccountService accounts;

    @Test
    void withoutAccountsTheServiceSaysWhatToDoThenTheDemoCreatesAnAdmin() throws Exception {
        assertThat(accounts.hasAccounts()).as("this class needs a database without accounts").isFalse();
        given().get("/api/v1/machines").then().statusCode(401).contentType("application/problem+json")
                .body("detail", equalTo("no accounts yet: run `macfleet users add NAME --role admin`"));
        given().get("/login").then().statusCode(200).body(containsString("No accounts yet"))
                .body(containsString("macfleet users add NAME --role admin"));

        Path home = Files.createTempDirectory("macfleet-demo-home");
        AccountService.DemoAccount first = accounts.prepareDemo(home).orElseThrow();
        assertThat(first.user()).isEqualTo("admin");
        assertThat(first.password()).hasSizeGreaterThanOrEqualTo(Passwords.MINIMUM_LENGTH);
        assertThat(first.passwordFile()).hasContent(first.password());
        for (Path secret : new Path[] {first.passwordFile(), first.tokenFile()}) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(secret))).as(secret.toString()).isEqualTo("rw-------");
        }
        assertThat(accounts.user("admin")).get().extracting(Account::role).isEqualTo(Role.ADMIN);
        TestAccounts.login("admin", first.password());
        String firstToken = Files.readString(first.tokenFile()).strip();
        given().header("Authorization", "Bearer " + firstToken).get("/api/v1/machines").then().statusCode(200);
        given().get("/login").then().statusCode(200).body(containsString("id=\"login-form\""));

        // A second start keeps the account (and does not show the password again) and replaces the token.
        AccountService.DemoAccount second = accounts.prepareDemo(home).orElseThrow();
        assertThat(second.password()).isNull();
        assertThat(second.passwordFile()).hasContent(first.password());
        String secondToken = Files.readString(second.tokenFile()).strip();
        assertThat(secondToken).isNotEqualTo(firstToken);
        given().header("Authorization", "Bearer " + firstToken).get("/api/v1/machines").then().statusCode(401);
        given().header("Authorization", "Bearer " + secondToken).get("/api/v1/machines").then().statusCode(200);
    }
}
