package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.macfleet.charts.ChartHistory;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.Inventory;
import io.macfleet.inventory.InventoryLoader;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The charts of the cluster and machine pages, served by the real service: the meters the metrics feature exports are
 * stood in for by gauges and a timer of the same names in the service's own registry. The panel's HTML (three
 * charts for a cluster, four for a Mac, the empty state, unknown names and ranges), then Chromium: the charts appear,
 * the range switch works, and the panel refreshes itself with a new value.
 */
@QuarkusTest
class ChartsBrowserTest {

    @TestHTTPResource("/")
    URL base;

    @Inject
    DesiredStateStore store;

    @Inject
    MeterRegistry registry;

    @Inject
    ChartHistory charts;

    private final List<Meter> meters = new ArrayList<>();
    private final AtomicReference<Double> tokensPerSecond = new AtomicReference<>(42.5);

    @BeforeEach
    void applyTheExampleAndRegisterTheMeters() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-charts");
        ExampleInventory.writeTo(directory, true);
        store.apply(InventoryLoader.load(directory).inventory(), "charts-test", directory.toString());
        meters.add(Gauge.builder("macfleet.inference.tokens.per.second", tokensPerSecond, AtomicReference::get).tag("cluster", "llm-a")
                .register(registry));
        meters.add(Gauge.builder("macfleet.inference.joules.per.token", () -> 0.8).tag("cluster", "llm-a").register(registry));
        Timer firstToken = Timer.builder("macfleet.inference.time.to.first.token").tag("cluster", "llm-a").register(registry);
        meters.add(firstToken);
        meters.add(Gauge.builder("macfleet.mac.cpu.temperature", () -> 61.5).baseUnit("celsius").tag("machine", "studio-01").register(registry));
        meters.add(Gauge.builder("macfleet.mac.gpu.temperature", () -> 58).baseUnit("celsius").tag("machine", "studio-01").register(registry));
        meters.add(Gauge.builder("macfleet.mac.package.power", () -> 142).baseUnit("watts").tag("machine", "studio-01").register(registry));
        meters.add(Gauge.builder("macfleet.mac.wired.memory", () -> 120.0 * (1L << 30)).baseUnit("bytes").tag("machine", "studio-01")
                .register(registry));
        meters.add(Gauge.builder("macfleet.mac.wired.limit", () -> 180.0 * (1L << 30)).baseUnit("bytes").tag("machine", "studio-01")
                .register(registry));
        meters.add(Gauge.builder("macfleet.mac.memory.pressure", () -> 0.35).baseUnit("ratio").tag("machine", "studio-01").register(registry));
        charts.sampleNow();
        firstToken.record(Duration.ofMillis(450));
        charts.sampleNow();
    }

    @AfterEach
    void removeTheMetersAndApplyNothing() {
        meters.forEach(registry::remove);
        store.apply(new Inventory(List.of(), List.of(), null), "charts-test", "nothing");
    }

    @Test
    void thePanelsHaveTheirChartsTheEmptyStateAndRefuseUnknownNames() {
        TestAccounts.Session viewer = TestAccounts.login(Role.VIEWER);
        Document cluster = Jsoup.parse(viewer.withoutCsrf().get("/console/clusters/llm-a/charts").then().statusCode(200)
                .header("Cache-Control", "no-store").extract().asString());
        assertThat(cluster.select("section#cluster-charts").attr("hx-get")).isEqualTo("/console/clusters/llm-a/charts?range=hour");
        assertThat(cluster.select("svg.chart title").eachText()).containsExactly("Tokens per second, cluster llm-a, last hour",
                "Time to first token (mean per interval), cluster llm-a, last hour", "Energy per generated token, cluster llm-a, last hour");
        // (The other test moves this gauge; the history is the service's, kept across tests: the value is a slot's mean.)
        assertThat(cluster.select("#chart-tokens-per-second-figure .chart-last-value").text()).matches("\\d+(\\.\\d+)? tokens/s at \\d\\d:\\d\\d UTC");
        assertThat(cluster.select("#chart-time-to-first-token-figure .chart-last-value").text()).startsWith("0.450 s at ");
        assertThat(cluster.select("#chart-joules-per-token-figure .chart-last-value").text()).startsWith("0.800 J/token at ");

        Document machine = Jsoup.parse(viewer.withoutCsrf().get("/console/machines/studio-01/charts?range=day").then().statusCode(200)
                .extract().asString());
        assertThat(machine.select("h2").text()).isEqualTo("Health, last day");
        assertThat(machine.select(".chart-ranges a[aria-current]").text()).isEqualTo("Last day");
        assertThat(machine.select("#chart-temperature-figure .chart-last-value").text()).startsWith("61.5 °C (CPU), 58.0 °C (GPU) at ");
        assertThat(machine.select("#chart-power-figure .chart-last-value").text()).startsWith("142 W at ");
        assertThat(machine.select("#chart-wired-memory-figure .chart-last-value").text()).startsWith("120 GiB (wired), 180 GiB (limit) at ");
        assertThat(machine.select("#chart-memory-pressure-figure .chart-last-value").text()).startsWith("35.0 % at ");

        // A Mac no meter speaks about yet: every chart says so.
        Document quiet = Jsoup.parse(viewer.withoutCsrf().get("/console/machines/studio-02/charts").then().statusCode(200).extract().asString());
        assertThat(quiet.select("svg.chart[data-empty=true]")).hasSize(4);
        assertThat(quiet.select("svg.chart text.chart-empty").eachText()).containsOnly("No data in the last hour");

        viewer.withoutCsrf().get("/console/clusters/nope/charts").then().statusCode(404);
        viewer.withoutCsrf().get("/console/machines/nope/charts").then().statusCode(404);
        assertThat(viewer.withoutCsrf().get("/console/clusters/llm-a/charts?range=week").then().statusCode(400).extract().asString())
                .contains("The range &#39;week&#39; is not one of: hour, day.");
    }

    @Test
    void chromiumShowsTheChartsSwitchesTheRangeAndRefreshesThePanel() throws Exception {
        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(TestAccounts.user(Role.VIEWER), TestAccounts.PASSWORD);
            browser.go("/console/clusters/llm-a");
            browser.waitUpTo(Duration.ofSeconds(30)).until(driver -> browser.count("#cluster-charts svg.chart") == 3);
            assertThat(browser.count("#cluster-charts svg.chart path.chart-line-0, #cluster-charts svg.chart circle.chart-line-0")).isEqualTo(3);
            // Drawn at a readable size, not collapsed: the SVG scales to its column.
            Number width = (Number) browser.script("return document.querySelector('#chart-tokens-per-second').getBoundingClientRect().width;");
            assertThat(width.doubleValue()).isGreaterThan(300);
            browser.screenshot("cluster-charts");

            // The charts need no inline style or script: the Content-Security-Policy blocks nothing while they are swapped.
            browser.script("window.cspViolations = []; document.addEventListener('securitypolicyviolation', function (e) {"
                    + " window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI); });");
            browser.click("#cluster-charts .chart-ranges a:not(.current)");
            browser.waitUpTo(Duration.ofSeconds(20)).until(driver -> "Inference, last day".equals(browser.text("#cluster-charts h2")));

            // The panel fetches itself again (every 15 s) with the range it shows: a new value appears without a reload.
            browser.script("document.body.dataset.mark = 'kept';");
            tokensPerSecond.set(500.0);
            charts.sampleNow();
            // The day's 5 min slot averages every sample in it: the last value moves towards 500.
            String before = browser.text("#chart-tokens-per-second-figure .chart-last-value");
            browser.waitUpTo(Duration.ofSeconds(40)).until(driver -> !browser.text("#chart-tokens-per-second-figure .chart-last-value").equals(before));
            assertThat(browser.text("#cluster-charts h2")).isEqualTo("Inference, last day");
            assertThat(browser.script("return document.body.dataset.mark;")).isEqualTo("kept");
            assertThat((List<?>) browser.script("return window.cspViolations;")).isEmpty();

            browser.go("/console/machines/studio-01");
            browser.waitUpTo(Duration.ofSeconds(30)).until(driver -> browser.count("#machine-charts svg.chart") == 4);
            assertThat(browser.attributes("#machine-charts svg.chart", "data-empty")).containsOnly("false");
            assertThat(browser.count("#chart-temperature circle.chart-line-1, #chart-temperature path.chart-line-1")).isEqualTo(1);
            browser.screenshot("machine-charts");
        }
    }
}
