package io.macfleet.console;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.quarkus.test.junit.QuarkusTest;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.Test;

/**
 * A service with nothing applied: every page says what to do next; errors say what was not found. Pages need a
 * signed-in user; the style sheet and script do not (the login page uses them).
 */
@QuarkusTest
class ConsoleEmptyStateTest {

    @io.quarkus.test.common.http.TestHTTPResource("/")
    java.net.URL base;

    private static TestAccounts.Session viewer;

    private static Document page(String path, int status) {
        if (viewer == null) {
            viewer = TestAccounts.login(Role.VIEWER);
        }
        String body = viewer.withoutCsrf().when().get(path).then().statusCode(status)
                .contentType("text/html").extract().asString();
        return Jsoup.parse(body);
    }

    @Test
    void theRootLeadsToTheConsoleAndTheConsoleToTheLoginPage() {
        given().redirects().follow(false).when().get("/").then().statusCode(303).header("Location", org.hamcrest.Matchers.endsWith("/console"));
        given().redirects().follow(false).when().get("/console/machines/studio-01").then().statusCode(303)
                .header("Location", org.hamcrest.Matchers.endsWith("/login?next=%2Fconsole%2Fmachines%2Fstudio-01"));
        // htmx asks for the live region with HX-Request: it is told to load the login page rather than swap it into the table.
        given().redirects().follow(false).header("HX-Request", "true").when().get("/console/fleet-table").then().statusCode(401)
                .header("HX-Redirect", org.hamcrest.Matchers.startsWith("/login?next="));
    }

    @Test
    void overviewWithoutInventorySaysHowToApplyOne() {
        Document overview = page("/console", 200);
        assertThat(overview.title()).isEqualTo("Fleet overview · macfleet");
        assertThat(overview.select("#no-inventory h2").text()).isEqualTo("No inventory applied yet");
        assertThat(overview.select("#no-inventory pre").text()).contains("macfleet inventory apply DIR").contains("macfleet demo");
        // The empty state sits inside the live region, so it turns into the fleet by itself once an inventory is applied.
        assertThat(overview.select("#fleet[hx-trigger='every 5s'] #no-inventory")).hasSize(1);
        assertThat(overview.select("nav[aria-label=Main] a").eachText()).containsExactly("Overview", "Clusters", "Runs", "OS updates", "Supervision", "Models", "Audit", "Inventory");
        assertThat(overview.select("nav[aria-label=Main] a[aria-current=page]").text()).isEqualTo("Overview");
        assertThat(overview.select("table")).isEmpty();
    }

    @Test
    void clustersAuditAndRunsHaveEmptyStates() {
        assertThat(page("/console/clusters", 200).select(".empty").text()).contains("No inventory applied yet").contains("macfleet inventory apply DIR");
        // Signing in is audited, so a signed-in person never sees an empty log; a search can still find nothing.
        assertThat(page("/console/audit", 200).select("table.audit tbody").text()).contains("login");
        assertThat(page("/console/audit?text=nothing-like-this", 200).select(".empty").text()).contains("No audit entry matches this search");
        // Actions can be left out as with `macfleet audit --exclude-action`: here the only ones there are.
        Document withoutLogins = page("/console/audit?exclude=login,account.*", 200);
        assertThat(withoutLogins.select("table.audit tbody").text()).doesNotContain("login");
        assertThat(withoutLogins.select("input[name=exclude]").val()).isEqualTo("login,account.*");
        assertThat(page("/console/audit?exclude=ssh.*exec", 400).select("[role=alert]").text()).contains("a * may only end the name");
        Document runs = page("/console/runs", 200);
        assertThat(runs.select("#no-runs h2").text()).isEqualTo("No provisioning runs yet");
        assertThat(runs.select("#no-runs").text()).contains("macfleet provision CLUSTER").contains("macfleet inventory apply DIR");
        // A viewer gets no form to start a run (and nothing to start it on).
        assertThat(runs.select("form#start-run")).isEmpty();
    }

    @Test
    void unknownMachineClusterAndPageAre404PagesThatLinkBack() {
        Document machine = page("/console/machines/studio-99", 404);
        assertThat(machine.select(".error-page h1").text()).isEqualTo("Machine not found");
        assertThat(machine.select(".error-page").text()).contains("There is no machine named 'studio-99' in the applied inventory.");
        assertThat(machine.select(".error-page a").attr("href")).isEqualTo("/console");

        Document cluster = page("/console/clusters/llm-z", 404);
        assertThat(cluster.select(".error-page").text()).contains("There is no cluster named 'llm-z' in the applied inventory.");
        assertThat(cluster.select(".error-page a").attr("href")).isEqualTo("/console/clusters");

        assertThat(page("/console/nothing/here", 404).select(".error-page").text()).contains("The console has no page at /console/nothing/here.");
        assertThat(page("/console/runs/42", 404).select(".error-page").text()).contains("There is no provisioning run 42.");
        assertThat(page("/console/runs/not-a-number", 404).select(".error-page a").attr("href")).isEqualTo("/console/runs");
        assertThat(page("/console?cluster=llm-z", 404).select(".error-page").text()).contains("no cluster named 'llm-z'");
    }

    @Test
    void badFiltersAndSearchesAre400sThatSayWhy() {
        assertThat(page("/console?status=broken", 400).select(".error-page").text())
                .contains("The status filter 'broken' is not one of all, problems, ready.");
        Document audit = page("/console/audit?from=yesterday", 400);
        assertThat(audit.select("[role=alert]").text()).contains("'from' is not a time: 'yesterday'").contains("2026-11-22T10:00");
        assertThat(audit.select("input[name=from]").val()).isEqualTo("yesterday");
        assertThat(page("/console/audit?from=2026-11-22&to=2026-11-20", 400).select("[role=alert]").text()).contains("before it starts");
        assertThat(page("/console/audit?page=0", 400).select("[role=alert]").text()).contains("The page '0' is not a page number");
    }

    @Test
    void stylesAndHtmxAreServedFromTheJar() {
        assertThat(given().when().get("/console/static/console.css").then().statusCode(200).contentType("text/css").extract().asString())
                .contains(".badge.bad");
        assertThat(given().when().get("/console/static/htmx.min.js").then().statusCode(200).contentType("text/javascript").extract().asString())
                .contains("htmx");
        given().when().get("/console/static/nothing.js").then().statusCode(404);
    }

    @Test
    void theEmptyOverviewInABrowser() throws Exception {
        String user = TestAccounts.user(Role.VIEWER);
        try (Browser browser = Browser.open(base.toString())) {
            browser.go("/console");
            browser.waitUpTo(java.time.Duration.ofSeconds(10)).until(driver -> driver.getCurrentUrl().contains("/login?next=%2Fconsole"));
            browser.signIn(user, TestAccounts.PASSWORD);
            browser.waitUpTo(java.time.Duration.ofSeconds(10)).until(driver -> driver.getCurrentUrl().endsWith("/console"));
            assertThat(browser.driver.findElement(org.openqa.selenium.By.cssSelector("#no-inventory h2")).getText()).isEqualTo("No inventory applied yet");
            browser.screenshot("overview-empty");
        }
    }
}
