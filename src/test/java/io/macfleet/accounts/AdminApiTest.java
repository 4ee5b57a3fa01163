package io.macfleet.accounts;

import static io.macfleet.accounts.TestAccounts.admin;
import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;

import io.macfleet.inventory.DesiredStateStore;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What only admins may do over REST: manage accounts and tokens, plan and apply the inventory. The same checks as
 * the CLI (names, password policy, never the last admin), 400 for bad input, 409 for a refusal, audited.
 */
@QuarkusTest
class AdminApiTest {

    private static final String INVENTORY = """
            defaults:
              ssh: {user: admin, privateKey: "env:MACFLEET_TEST_KEY"}
            clusters:
              - name: llm-api
                macosVersion: "26.2"
                topology: {kind: full-mesh}
            machines:
              - name: studio-[01-02]
                address: 192.168.60.[11-12]
                cluster: llm-api
            """;

    @Inject
    DesiredStateStore store;

    /** REST Assured sends a String body as is only for content types it knows; YAML is text. */
    private static io.restassured.specification.RequestSpecification yaml(io.restassured.specification.RequestSpecification request, String body) {
        return request.config(io.restassured.config.RestAssuredConfig.config().encoderConfig(io.restassured.config.EncoderConfig.encoderConfig()
                .encodeContentTypeAs("application/yaml", ContentType.TEXT))).contentType("application/yaml").body(body);
    }

    @Inject
    AccountService accounts;

    @Test
    void onlyAdminsManageAccounts() {
        String adminName = TestAccounts.user(Role.ADMIN);
        operator().get("/api/v1/users").then().statusCode(403).contentType("application/problem+json");
        viewer().contentType(ContentType.JSON).body(Map.of("name", "mallory", "role", "admin", "password", "long enough password"))
                .post("/api/v1/users").then().statusCode(403);
        assertThat(accounts.user("mallory")).isEmpty();

        admin().contentType(ContentType.JSON).body(Map.of("name", "grace", "role", "operator", "password", "long enough password"))
                .post("/api/v1/users").then().statusCode(201).body("name", equalTo("grace")).body("role", equalTo("operator"))
                .body("$", not(org.hamcrest.Matchers.hasKey("password")));
        admin().get("/api/v1/users").then().statusCode(200).body("name", hasItem("grace"));
        admin().contentType(ContentType.JSON).body(Map.of("name", "grace", "role", "viewer", "password", "long enough password"))
                .post("/api/v1/users").then().statusCode(409).body("detail", containsString("already exists"));
        admin().contentType(ContentType.JSON).body(Map.of("name", "heidi", "role", "viewer", "password", "short"))
                .post("/api/v1/users").then().statusCode(400).body("detail", containsString("too short"));
        admin().contentType(ContentType.JSON).body(Map.of("name", "heidi", "role", "root", "password", "long enough password"))
                .post("/api/v1/users").then().statusCode(400).body("detail", containsString("unknown role 'root'"));
        admin().contentType(ContentType.JSON).body("{}").post("/api/v1/users").then().statusCode(400);

        admin().contentType(ContentType.JSON).body(Map.of("role", "admin")).patch("/api/v1/users/grace").then().statusCode(200).body("role", equalTo("admin"));
        admin().contentType(ContentType.JSON).body(Map.of("disabled", true)).patch("/api/v1/users/grace").then().statusCode(200).body("disabled", equalTo(true));
        admin().contentType(ContentType.JSON).body(Map.of("role", "viewer")).patch("/api/v1/users/nobody").then().statusCode(404);
        admin().delete("/api/v1/users/grace").then().statusCode(204);
        assertThat(accounts.user("grace")).isEmpty();

        // The only active admin cannot demote, disable or remove itself into a service nobody can administer.
        accounts.users().stream().filter(account -> account.role() == Role.ADMIN && !account.name().equals(adminName))
                .forEach(account -> accounts.removeUser(account.name(), "test"));
        admin().contentType(ContentType.JSON).body(Map.of("role", "viewer")).patch("/api/v1/users/" + adminName)
                .then().statusCode(409).body("detail", containsString("last admin"));
        admin().delete("/api/v1/users/" + adminName).then().statusCode(409);
    }

    @Test
    void aTokenCreatedByAnAdminIsShownOnceWorksAndCanBeRevoked() {
        String viewerName = TestAccounts.user(Role.VIEWER);
        var created = admin().contentType(ContentType.JSON).body(Map.of("name", "ci-read", "expiresInDays", 30))
                .post("/api/v1/users/" + viewerName + "/tokens").then().statusCode(201).header("Cache-Control", "no-store")
                .body("user", equalTo(viewerName)).extract();
        String token = created.path("token");
        int id = created.path("id");
        given().header("Authorization", "Bearer " + token).get("/api/v1/clusters").then().statusCode(200);
        admin().get("/api/v1/users/" + viewerName + "/tokens").then().statusCode(200)
                .body("name", hasItem("ci-read")).body("$", not(hasItem(org.hamcrest.Matchers.hasKey("token"))));
        admin().contentType(ContentType.JSON).body(Map.of("name", "ci-read")).post("/api/v1/users/" + viewerName + "/tokens").then().statusCode(409);
        admin().contentType(ContentType.JSON).body(Map.of("name", "x", "expiresInDays", 0)).post("/api/v1/users/" + viewerName + "/tokens").then().statusCode(400);
        operator().delete("/api/v1/tokens/" + id).then().statusCode(403);
        admin().delete("/api/v1/tokens/" + id).then().statusCode(204);
        given().header("Authorization", "Bearer " + token).get("/api/v1/clusters").then().statusCode(401);
        admin().delete("/api/v1/tokens/" + id).then().statusCode(404);
    }

    @Test
    void adminsPlanAndApplyAnInventoryDocumentInvalidOnesChangeNothing() {
        String adminName = TestAccounts.user(Role.ADMIN);
        yaml(operator(), INVENTORY).post("/api/v1/inventory/apply").then().statusCode(403);

        yaml(admin(), INVENTORY).post("/api/v1/inventory/plan").then().statusCode(200)
                .body("changes.size()", equalTo(3)).body("changes[0].action", equalTo("ADD"));
        assertThat(store.clusters()).isEmpty();

        String broken = INVENTORY.replace("address: 192.168.60.[11-12]", "address: 192.168.60.[11-12]\n    colour: red");
        yaml(admin(), broken).post("/api/v1/inventory/apply").then().statusCode(400)
                .contentType("application/problem+json").body("detail", containsString("inventory.yaml:10:5"));
        yaml(admin(), "machines: [").post("/api/v1/inventory/apply").then().statusCode(400)
                .body("detail", containsString("inventory.yaml:1:"));
        yaml(admin(), "").post("/api/v1/inventory/apply").then().statusCode(400);
        assertThat(store.clusters()).isEmpty();

        yaml(admin(), INVENTORY).post("/api/v1/inventory/apply").then().statusCode(200)
                .body("changes.size()", equalTo(3));
        assertThat(store.machines("llm-api")).hasSize(2);
        yaml(admin(), INVENTORY).post("/api/v1/inventory/plan").then().statusCode(200).body("changes.size()", equalTo(0));
        viewer().queryParam("action", "inventory.apply").get("/api/v1/audit").then().statusCode(200)
                .body("actor", hasItem(adminName));
    }
}
