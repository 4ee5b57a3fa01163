package io.macfleet.api;

import static io.macfleet.accounts.TestAccounts.admin;
import static io.macfleet.accounts.TestAccounts.viewer;
import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.nio.charset.StandardCharsets;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/** The smaller items of issue 14 (item 11): strict JSON, a bad query parameter, clean error bodies, loopback, invalid UTF-8. */
@QuarkusTest
class StrictInputApiTest {

    private static void clean(Response response) {
        assertThat(response.asString()).doesNotContain("com.fasterxml", "java.", "Exception", "/work/", "/home/", "/root/");
    }

    @Test
    void aNumberIsNotAStringAndRangesAreChecked() {
        String user = TestAccounts.user(Role.VIEWER);
        Response numberAsName = admin().contentType("application/json").body("{\"name\": 1}").post("/api/v1/users/" + user + "/tokens");
        assertThat(numberAsName.statusCode()).isEqualTo(400);
        assertThat(numberAsName.asString()).contains("at 'name'", "expected a string");
        clean(numberAsName);

        Response farFuture = admin().contentType("application/json").body("{\"name\": \"far\", \"expiresInDays\": 2147483647}")
                .post("/api/v1/users/" + user + "/tokens");
        assertThat(farFuture.statusCode()).isEqualTo(400);
        assertThat(farFuture.asString()).contains("expiresInDays", "3650");

        Response overflow = admin().contentType("application/json").body("{\"name\": \"far\", \"expiresInDays\": 99999999999}")
                .post("/api/v1/users/" + user + "/tokens");
        assertThat(overflow.statusCode()).isEqualTo(400);
        clean(overflow);

        Response stringAsNumber = admin().contentType("application/json").body("{\"name\": \"far\", \"expiresInDays\": \"30\"}")
                .post("/api/v1/users/" + user + "/tokens");
        assertThat(stringAsNumber.statusCode()).isEqualTo(400);
        assertThat(stringAsNumber.asString()).contains("at 'expiresInDays'", "whole number");

        Response stringAsBoolean = admin().contentType("application/json").body("{\"disabled\": \"yes\"}").patch("/api/v1/users/" + user);
        assertThat(stringAsBoolean.statusCode()).isEqualTo(400);
        clean(stringAsBoolean);

        Response malformed = admin().contentType("application/json").body("{\"name\": ").post("/api/v1/users/" + user + "/tokens");
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(malformed.asString()).contains("malformed JSON");
        clean(malformed);
    }

    @Test
    void aLimitThatIsNotANumberIs400() {
        Response response = viewer().get("/api/v1/runs?limit=abc");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.asString()).contains("limit 'abc'");
        viewer().get("/api/v1/runs?limit=5").then().statusCode(200);
    }

    @Test
    void theServiceListensOnLoopbackByDefault() {
        assertThat(ConfigProvider.getConfig().getValue("quarkus.http.host", String.class)).isEqualTo("127.0.0.1");
    }

    @Test
    void anInventoryOverTheSizeCapIs413NamingTheLimit() {
        String document = "machines:\n" + "  - name: a\n".repeat(io.macfleet.inventory.PositionedYaml.MAXIMUM_DOCUMENT_BYTES / 12 + 10);
        Response response = admin().contentType("application/yaml").body(document.getBytes(StandardCharsets.UTF_8)).post("/api/v1/inventory/plan");
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(response.asString()).contains(String.valueOf(io.macfleet.inventory.PositionedYaml.MAXIMUM_DOCUMENT_BYTES));
        clean(response);
    }

    @Test
    void invalidUtf8InAnInventoryIsAnErrorWithItsByteOffset() {
        byte[] body = "machines:\n  - name: caf\u00e9\n".getBytes(StandardCharsets.UTF_8);
        byte[] broken = java.util.Arrays.copyOf(body, body.length);
        int offset = new String(body, StandardCharsets.UTF_8).indexOf('\u00e9') ; // é is the first non-ASCII character
        broken[offset] = (byte) 0xff;
        Response response = admin().contentType("application/yaml").body(broken).post("/api/v1/inventory/plan");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.asString()).contains("invalid UTF-8 at byte " + offset, "inventory.yaml:2:");
    }
}
