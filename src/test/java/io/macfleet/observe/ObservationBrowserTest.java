package io.macfleet.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.simulator.FaultStep;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.testing.SimulatedCluster;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.support.ui.ExpectedConditions;

/**
 * Issue 13 in a real browser (headless Chromium) against simulated Macs: "Refresh now" on a machine page and on a
 * cluster page reads the Macs again and the page shows what they say now; a Mac that hangs is shown unreachable, with
 * since when, when it was last seen and the last error; the overview's ready count, its rows, the cluster card, the
 * cluster page and every machine page agree on which machines are ready.
 * <p>
 * The scheduled loop is off here (its timing is {@link ObservationLoopTest}'s): whatever changes on the pages changes
 * because a button was pressed. Short SSH timeouts keep the hung Mac's refresh to a few seconds.
 */
@QuarkusTest
@TestProfile(ObservationBrowserTest.RefreshOnly.class)
class ObservationBrowserTest {

    public static class RefreshOnly implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("macfleet.observation.enabled", "false",
                    "macfleet.observation.connect-timeout", "3S", "macfleet.observation.command-timeout", "3S");
        }
    }

    private static final List<String> CLUSTER = SimulatedCluster.MEMBERS;
    /** Generous: the machine is shared with other builds; every wait ends as soon as its condition holds. */
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    static SimulatedCluster simulation;

    @TestHTTPResource("/")
    URL base;

    @Inject
    DesiredStateStore store;

    @Inject
    FactsService facts;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedCluster.start("observe-browser", 4, "127.0.6.1");
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @BeforeEach
    void healthyAndGathered() throws Exception {
        simulation.heal();
        simulation.apply(store, "observe-browser-test", Map.of());
        simulation.gather(facts);
    }

    /** The text of a machine page's status entry (its badge and detail), found by the entry's title. */
    private static String statusEntry(Browser browser, String title) {
        return (String) browser.script("var entries = document.querySelectorAll('dl.statuses > div');"
                + " for (var i = 0; i < entries.length; i++) {"
                + "   if (entries[i].querySelector('dt').innerText.trim() === arguments[0]) { return entries[i].querySelector('dd').innerText.trim(); } }"
                + " return '';", title);
    }

    private static String facts(Browser browser) {
        String text = browser.text("dl.facts");
        return text == null ? "" : text;
    }

    @Test
    void refreshNowOnTheClusterAndMachinePagesShowsWhatTheMacsSayNow() throws Exception {
        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(TestAccounts.user(Role.OPERATOR), TestAccounts.PASSWORD);
            assertReadyEverywhere(browser, List.of("studio-01", "studio-02", "studio-03", "studio-04"));

            // The cluster page: RDMA goes off on one Mac. The stored facts do not know yet; Refresh now reads the cluster.
            simulation.fleet.machine("studio-03").setRdmaEnabled(false);
            browser.go("/console/clusters/llm-a");
            browser.waitUpTo(PATIENCE).until(ExpectedConditions.titleIs("Cluster llm-a · macfleet"));
            assertThat(browser.text(".readiness h2")).contains("ready for tensor parallelism").doesNotContain("not ready");
            browser.click("#refresh-cluster button[type=submit]");
            browser.waitUpTo(PATIENCE).until(driver -> {
                String readiness = browser.text(".readiness");
                return readiness != null && readiness.contains("not ready") && readiness.contains("studio-03");
            });
            assertThat(browser.driver.getCurrentUrl()).endsWith("/console/clusters/llm-a");
            browser.screenshot("observe-cluster-after-refresh");
            assertReadyEverywhere(browser, List.of("studio-01", "studio-02", "studio-04"));

            // The machine page: macOS changes on studio-01; the page shows the stored version until Refresh now.
            simulation.fleet.machine("studio-01").setRelease(MacosRelease.of("26.1"));
            browser.go("/console/machines/studio-01");
            browser.waitUpTo(PATIENCE).until(ExpectedConditions.titleIs("studio-01 · macfleet"));
            assertThat(facts(browser)).contains("26.2").doesNotContain("26.1");
            browser.click("#refresh-machine button[type=submit]");
            browser.waitUpTo(PATIENCE).until(driver -> facts(browser).contains("26.1"));
            assertThat(browser.driver.getCurrentUrl()).endsWith("/console/machines/studio-01");
            assertThat(statusEntry(browser, "Reachable")).startsWith("seen ");
            assertThat(browser.text("#machine-ready")).isEqualTo("not ready");
            browser.screenshot("observe-machine-after-refresh");
            assertReadyEverywhere(browser, List.of("studio-02", "studio-04"));
        } finally {
            simulation.heal();
        }
    }

    @Test
    void aHungMacIsShownUnreachableSinceWithItsLastSightingAndLastError() throws Exception {
        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(TestAccounts.user(Role.OPERATOR), TestAccounts.PASSWORD);
            simulation.fleet.inject(FaultStep.machine("studio-02", "hang"));

            browser.go("/console/machines/studio-02");
            browser.waitUpTo(PATIENCE).until(ExpectedConditions.titleIs("studio-02 · macfleet"));
            browser.click("#refresh-machine button[type=submit]");
            browser.waitUpTo(PATIENCE).until(driver -> statusEntry(browser, "Reachable").startsWith("unreachable since"));
            String reachable = statusEntry(browser, "Reachable");
            assertThat(reachable).contains("no answer over SSH since").contains("; last seen ").contains("; last error: ");
            assertThat(browser.text("#machine-ready")).isEqualTo("not ready");
            browser.screenshot("observe-machine-unreachable");

            // The overview says the same: the row, the count of ready machines, the cluster card.
            assertReadyEverywhere(browser, List.of("studio-01", "studio-03", "studio-04"));
            browser.go("/console");
            String row = browser.text("table.machines tr[data-machine='studio-02']");
            assertThat(row).contains("unreachable since");
            // Problems first: the unreachable Mac is on top.
            assertThat(browser.attributes("table.machines tbody tr", "data-machine").getFirst()).isEqualTo("studio-02");
            browser.screenshot("observe-overview-unreachable");

            // It answers again: one more Refresh now and it is seen, and ready, again.
            simulation.heal();
            browser.go("/console/machines/studio-02");
            browser.click("#refresh-machine button[type=submit]");
            browser.waitUpTo(PATIENCE).until(driver -> statusEntry(browser, "Reachable").startsWith("seen "));
            assertReadyEverywhere(browser, CLUSTER);
        } finally {
            simulation.heal();
        }
    }

    /**
     * One notion of ready: exactly these machines are ready on the overview (its count and its rows), on their machine
     * pages and in the cluster page's table; the cluster card and the cluster page say "ready for tensor parallelism"
     * exactly when all four are.
     */
    private static void assertReadyEverywhere(Browser browser, List<String> ready) {
        boolean clusterReady = ready.size() == CLUSTER.size();
        browser.go("/console");
        browser.waitUpTo(PATIENCE).until(ExpectedConditions.titleIs("Fleet overview · macfleet"));
        assertThat(browser.text("#ready-count")).isEqualTo(String.valueOf(ready.size()));
        for (String machine : CLUSTER) {
            assertThat(browser.attributes("table.machines tr[data-machine='" + machine + "']", "data-ready"))
                    .as("the overview's row of " + machine).containsExactly(String.valueOf(ready.contains(machine)));
        }
        String card = browser.text(".cluster-cards li");
        if (clusterReady) {
            assertThat(card).contains("ready for tensor parallelism").doesNotContain("not ready");
        } else {
            assertThat(card).contains("not ready");
        }

        browser.go("/console/clusters/llm-a");
        browser.waitUpTo(PATIENCE).until(ExpectedConditions.titleIs("Cluster llm-a · macfleet"));
        for (String machine : CLUSTER) {
            assertThat(browser.attributes("table.machines tr[data-machine='" + machine + "']", "data-ready"))
                    .as("the cluster page's row of " + machine).containsExactly(String.valueOf(ready.contains(machine)));
        }
        assertThat(browser.text(".readiness h2")).contains(clusterReady ? "ready for tensor parallelism" : "not ready");

        for (String machine : CLUSTER) {
            browser.go("/console/machines/" + machine);
            browser.waitUpTo(PATIENCE).until(ExpectedConditions.titleIs(machine + " · macfleet"));
            assertThat(browser.text("#machine-ready")).as("the machine page of " + machine).isEqualTo(ready.contains(machine) ? "ready" : "not ready");
        }
    }
}
