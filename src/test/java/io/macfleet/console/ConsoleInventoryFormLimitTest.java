package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.inventory.PositionedYaml;
import io.macfleet.inventory.YamlLimitsTest;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

/** The console's inventory form takes documents up to the document cap, and answers a too-large form with a page (issue 14, item 7). */
@QuarkusTest
class ConsoleInventoryFormLimitTest {

    @Test
    void aDocumentOfSomeKilobytesIsPlanned() {
        String document = YamlLimitsTest.inventoryOf(40);
        assertThat(document.length()).isGreaterThan(4_000);
        Response response = TestAccounts.login(Role.ADMIN).request()
                .formParam("yaml", document).formParam("action", "plan").post("/console/inventory");
        assertThat(response.statusCode()).as(response.asString()).isEqualTo(200);
        assertThat(response.contentType()).startsWith("text/html");
        assertThat(response.asString()).contains("Plan:");
    }

    @Test
    void aFormOverTheLimitGetsAPageNamingTheLimit() {
        String document = "machines:\n" + "  - name: a\n".repeat(PositionedYaml.MAXIMUM_DOCUMENT_BYTES / 10);
        Response response = TestAccounts.login(Role.ADMIN).request()
                .formParam("yaml", document).formParam("action", "plan").post("/console/inventory");
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(response.contentType()).startsWith("text/html");
        assertThat(response.asString()).contains("<!DOCTYPE html>", String.valueOf(PositionedYaml.MAXIMUM_DOCUMENT_BYTES), "/console/inventory");
    }
}
