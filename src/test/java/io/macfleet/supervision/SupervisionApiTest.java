package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.quarkus.test.junit.QuarkusTest;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.Test;

/** The supervision's API and console page with nothing deployed: roles, empty state, problems for unknown clusters. */
@QuarkusTest
class SupervisionApiTest {

    @Test
    void viewersReadTheStateOperatorsActAndUnknownClustersAreNamed() {
        TestAccounts.viewer().when().get("/api/v1/supervision").then().statusCode(200).body(containsString("[]"));
        TestAccounts.viewer().when().post("/api/v1/supervision/llm-x/restart").then().statusCode(403);
        TestAccounts.viewer().when().get("/api/v1/supervision/llm-x/ranks/0/log").then().statusCode(403);
        TestAccounts.operator().when().post("/api/v1/supervision/llm-x/restart").then().statusCode(404)
                .body(containsString("no cluster named 'llm-x' in the applied inventory"));
        TestAccounts.operator().when().get("/api/v1/supervision/llm-x/ranks/0/log").then().statusCode(404)
                .body(containsString("no cluster named 'llm-x' in the applied inventory"));
        // a number of lines that is not a number is a bad request (JAX-RS alone answered 404 to it)
        TestAccounts.operator().when().get("/api/v1/supervision/llm-x/ranks/0/log?lines=abc").then().statusCode(400)
                .body(containsString("lines must be a whole number of lines"));
    }

    @Test
    void theConsolePageShowsTheEmptyStateAndTheBannerIsEmptyWithoutAlerts() {
        TestAccounts.Session viewer = TestAccounts.login(Role.VIEWER);
        Document page = Jsoup.parse(viewer.request().when().get("/console/supervision").then().statusCode(200).extract().asString());
        assertThat(page.select("#no-supervised-clusters")).hasSize(1);
        assertThat(page.select("nav a[href=/console/supervision]").attr("aria-current")).isEqualTo("page");
        assertThat(page.select("#supervision-alerts").attr("hx-get")).isEqualTo("/console/supervision/banner");
        String banner = viewer.request().when().get("/console/supervision/banner").then().statusCode(200).extract().asString();
        assertThat(Jsoup.parse(banner).select(".banner")).isEmpty();
        // Reading a rank's log is an operator's action.
        viewer.request().when().get("/console/supervision?cluster=llm-x&rank=0").then().statusCode(403);
    }
}
