package io.macfleet.accounts;

import static io.macfleet.accounts.TestAccounts.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** PATCH /api/v1/users/{name} applies every part of a change or none (issue 14, item 2). */
@QuarkusTest
class UserChangeAllOrNothingTest {

    @Inject
    AccountService accounts;

    @Test
    void aRefusedPasswordLeavesTheRoleAsItWas() {
        if (accounts.user("judy").isEmpty()) {
            accounts.addUser("judy", Role.VIEWER, TestAccounts.PASSWORD, "test");
        }
        admin().contentType(ContentType.JSON).body(Map.of("role", "admin", "password", "short"))
                .patch("/api/v1/users/judy").then().statusCode(400).body("detail", containsString("too short"));
        assertThat(accounts.user("judy").orElseThrow().role()).isEqualTo(Role.VIEWER);

        admin().contentType(ContentType.JSON).body(Map.of("disabled", true, "role", "sudo"))
                .patch("/api/v1/users/judy").then().statusCode(400).body("detail", containsString("unknown role"));
        assertThat(accounts.user("judy").orElseThrow().disabled()).isFalse();

        admin().contentType(ContentType.JSON).body(Map.of("role", "operator", "disabled", true, "password", "a new long passphrase"))
                .patch("/api/v1/users/judy").then().statusCode(200).body("role", equalTo("operator")).body("disabled", equalTo(true));
        accounts.removeUser("judy", "test");
    }

    @Test
    void theLastAdminRuleLooksAtTheWholeChange() {
        String adminName = TestAccounts.user(Role.ADMIN);
        accounts.users().stream().filter(account -> account.role() == Role.ADMIN && !account.name().equals(adminName))
                .forEach(account -> accounts.removeUser(account.name(), "test"));
        // Staying admin but disabled would leave nobody: refused, and the password part not applied either.
        String before = accounts.user(adminName).orElseThrow().toString();
        admin().contentType(ContentType.JSON).body(Map.of("password", "another long passphrase", "disabled", true))
                .patch("/api/v1/users/" + adminName).then().statusCode(409).body("detail", containsString("last admin"));
        assertThat(accounts.user(adminName).orElseThrow().toString()).isEqualTo(before);
        admin().get("/api/v1/users").then().statusCode(200);
    }
}
