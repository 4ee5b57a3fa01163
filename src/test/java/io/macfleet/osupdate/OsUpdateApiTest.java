package io.macfleet.osupdate;

import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** REST: viewers read campaigns, operators start, pause and resume them; bad input is a 4xx problem body; a started campaign runs to the end. */
@QuarkusTest
class OsUpdateApiTest {
    static CampaignFixture fixture;

    @Inject
    DesiredStateStore store;

    @BeforeAll
    static void start() throws Exception {
        fixture = CampaignFixture.start(Files.createTempDirectory("macfleet-os-update-api"), "127.0.0.71");
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void operatorsStartAndViewersWatchACampaign() throws Exception {
        store.apply(InventoryLoader.load(fixture.inventory).inventory(), "api-test", fixture.inventory.toString());
        Map<String, Object> body = Map.of("clusters", List.of("llm-a"), "to", "26.2", "build", "25C56");

        given().contentType(ContentType.JSON).body(body).post("/api/v1/os-updates").then().statusCode(401).contentType("application/problem+json");
        viewer().contentType(ContentType.JSON).body(body).post("/api/v1/os-updates")
                .then().statusCode(403).contentType("application/problem+json").body("detail", containsString("operator"));
        operator().contentType(ContentType.JSON).body(Map.of("clusters", List.of("llm-z"), "to", "26.2")).post("/api/v1/os-updates")
                .then().statusCode(400).contentType("application/problem+json").body("detail", containsString("no cluster named 'llm-z'"));
        operator().contentType(ContentType.JSON).body(Map.of("clusters", List.of("llm-a"), "to", "twenty-six")).post("/api/v1/os-updates")
                .then().statusCode(400).contentType("application/problem+json").body("detail", containsString("is not a version like 26.2"));
        operator().contentType(ContentType.JSON).body(Map.of("clusters", List.of("llm-a"), "to", "26.2", "installBy", "tomorrow")).post("/api/v1/os-updates")
                .then().statusCode(400).contentType("application/problem+json").body("detail", containsString("installBy 'tomorrow'"));
        viewer().get("/api/v1/os-updates/999999").then().statusCode(404).contentType("application/problem+json");
        operator().post("/api/v1/os-updates/999999/pause").then().statusCode(404).contentType("application/problem+json");
        viewer().get("/api/v1/os-updates?limit=lots").then().statusCode(400).contentType("application/problem+json");
        assertThat(fixture.hub.declarationWrites()).isEmpty();

        int id = operator().contentType(ContentType.JSON).body(body).post("/api/v1/os-updates").then().statusCode(202).extract().path("id");
        long deadline = System.nanoTime() + java.time.Duration.ofMinutes(4).toNanos();
        String status = "";
        while (System.nanoTime() < deadline) {
            status = viewer().get("/api/v1/os-updates/" + id).then().statusCode(200).extract().path("status");
            if (!status.equals("running")) {
                break;
            }
            Thread.sleep(500);
        }
        assertThat(status).isEqualTo("succeeded");
        viewer().get("/api/v1/os-updates/" + id).then().statusCode(200)
                .body("createdBy", equalTo(io.macfleet.accounts.TestAccounts.user(io.macfleet.accounts.Role.OPERATOR)))
                .body("clusters[0].step", equalTo("done"))
                .body("clusters[0].machines[2].buildVersion", equalTo("25C56"));
        viewer().get("/api/v1/os-updates").then().statusCode(200).body("[0].id", equalTo(id));
        viewer().get("/api/v1/os-updates/maintenance").then().statusCode(200).body("size()", equalTo(0));
        assertThat(fixture.releases()).containsOnly("26.2 25C56");

        viewer().post("/api/v1/os-updates/" + id + "/pause").then().statusCode(403);
        operator().post("/api/v1/os-updates/" + id + "/pause").then().statusCode(409).contentType("application/problem+json")
                .body("detail", containsString("only a running campaign can be paused"));
        operator().post("/api/v1/os-updates/" + id + "/resume").then().statusCode(409).contentType("application/problem+json")
                .body("detail", containsString("already succeeded"));

        // The console: viewers see the campaigns and each machine's phase; only operators get the start form and buttons.
        io.macfleet.accounts.TestAccounts.Session viewer = io.macfleet.accounts.TestAccounts.login(io.macfleet.accounts.Role.VIEWER);
        io.macfleet.accounts.TestAccounts.Session operator = io.macfleet.accounts.TestAccounts.login(io.macfleet.accounts.Role.OPERATOR);
        String list = viewer.request().get("/console/os-updates").then().statusCode(200).extract().asString();
        assertThat(list).contains("data-campaign=\"" + id + "\"", "26.2 (25C56)", "llm-a (done)", "href=\"/console/os-updates\" aria-current=\"page\"")
                .doesNotContain("id=\"start-campaign\"");
        assertThat(operator.request().get("/console/os-updates").then().statusCode(200).extract().asString()).contains("id=\"start-campaign\"");
        String page = viewer.request().get("/console/os-updates/" + id).then().statusCode(200).extract().asString();
        assertThat(page).contains("OS update " + id + ": to 26.2 (25C56)", "data-machine=\"studio-04\"", "26.2 (25C56)", "verified: sw_vers 26.2 (25C56)")
                // A finished campaign's progress no longer refreshes itself (the layout's alert banner still does).
                .doesNotContain("hx-get=\"/console/os-updates/" + id + "/progress").doesNotContain("id=\"pause\"");
        assertThat(viewer.request().get("/console/os-updates/" + id + "/progress").then().statusCode(200).extract().asString())
                .startsWith("<div id=\"campaign-progress\"");
        viewer.request().post("/console/os-updates/" + id + "/pause").then().statusCode(403);
        assertThat(operator.request().redirects().follow(false).post("/console/os-updates/" + id + "/pause").then().statusCode(409).extract().asString())
                .contains("only a running campaign can be paused");
        viewer.request().get("/console/os-updates/424242").then().statusCode(404);
    }
}
