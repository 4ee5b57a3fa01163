package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.macfleet.models.placement.ModelPlacement;
import io.macfleet.models.placement.PlacedFile;
import io.macfleet.models.placement.PlacementReport;
import io.macfleet.models.placement.PlacementStore;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * The Models page in a real Chromium: where a model lies verified, a running placement's per-Mac progress refreshed by
 * htmx as the stored progress moves (no reload), and an operator starting a placement from the form.
 */
@QuarkusTest
class ModelsBrowserTest {

    @TestHTTPResource("/")
    URL base;

    @Inject
    ModelCatalogue catalogue;

    @Inject
    ModelPlacement placement;

    @Inject
    DataSource dataSource;

    @Inject
    io.macfleet.inventory.DesiredStateStore desiredState;

    @Test
    void placementsShowWhereAModelIsAndTheirProgressRefreshesAndAnOperatorStartsOne() throws Exception {
        String name = "browser-" + ProcessHandle.current().pid();
        Path source = TestModels.gguf(Files.createTempDirectory("macfleet-models-browser").resolve("browser.gguf"), 15, 4096, 23);
        CatalogueModel model = catalogue.add(name, source.toString(), Optional.empty(), Optional.empty(), "browser-test",
                HuggingFaceHub.Progress.NONE);
        // The example inventory (cluster llm-a) naming this model, so the form offers a cluster whatever other tests
        // applied before (the example's own model is a path outside the test's models directory, which is refused).
        Path inventory = Files.createTempDirectory("macfleet-models-browser-inventory");
        io.macfleet.inventory.ExampleInventory.writeTo(inventory, false);
        Path clusters = inventory.resolve("clusters.yaml");
        Files.writeString(clusters, Files.readString(clusters).replace("model: /opt/models/Llama-3.3-70B-Instruct-Q8_0.gguf", "model: " + name));
        desiredState.apply(io.macfleet.inventory.InventoryLoader.load(inventory).inventory(), "browser-test", inventory.toString());
        PlacementStore store = new PlacementStore(dataSource);
        PlacedFile file = PlacedFile.of(model, model.files().getFirst(), catalogue.localFile(model, model.files().getFirst()));
        Instant now = Instant.now();
        store.start(name + "-1", "llm-browser", name, "alice", now.minusSeconds(30), model.totalBytes(), List.of("studio-01"));
        store.finish(name + "-1", name, new PlacementReport("llm-browser", List.of(List.of("studio-01")), List.of(
                new PlacementReport.MacOutcome("studio-01", PlacementReport.Kind.PLACED, model.totalBytes(), 0, "placed and verified")),
                model.totalBytes(), model.totalBytes(), 100, 1), List.of(file), now.minusSeconds(20));
        String running = name + "-2";
        store.start(running, "llm-browser-2", name, "bob", now, 1000, List.of("studio-02", "studio-03"));
        store.progress(running, Map.of("studio-02", 100L, "studio-03", 50L), Instant.now());

        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(TestAccounts.user(Role.VIEWER), TestAccounts.PASSWORD);
            browser.go("/console/models");
            assertThat(browser.text("tr[data-model='" + name + "'] td.placed")).isEqualTo("llm-browser: studio-01");
            String row = "[data-placement='" + running + "'] tr[data-machine='studio-02']";
            browser.waitUpTo(Duration.ofSeconds(60)).until(driver -> "10".equals(firstOrNull(browser.attributes(row, "data-percent"))));
            assertThat(browser.count("#place-model")).isZero();

            // The Mac moves on; the part is fetched again every 5 seconds, so the page follows without a reload.
            store.progress(running, Map.of("studio-02", 700L, "studio-03", 650L), Instant.now());
            browser.waitUpTo(Duration.ofSeconds(60)).until(driver -> "70".equals(firstOrNull(browser.attributes(row, "data-percent"))));
            assertThat(browser.text("[data-placement='" + running + "'] .badge")).isEqualTo("running");
            browser.screenshot("models-placements");
            store.fail(running, "stopped by the test", Instant.now());
        }

        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(TestAccounts.user(Role.OPERATOR), TestAccounts.PASSWORD);
            browser.go("/console/models");
            new org.openqa.selenium.support.ui.Select(browser.driver.findElement(By.cssSelector("#place-model select[name=model]"))).selectByValue(name);
            new org.openqa.selenium.support.ui.Select(browser.driver.findElement(By.cssSelector("#place-model select[name=cluster]"))).selectByValue("llm-a");
            browser.click("#place-model button[type=submit]");
            // The placement is recorded at once and shown (running, or failed when the example inventory's Macs do not answer).
            browser.waitUpTo(Duration.ofSeconds(60)).until(driver -> placement.latest("llm-a").map(record -> record.model().equals(name)).orElse(false)
                    || browser.count("main h1") > 0 && !browser.text("main h1").equals("Models"));
            assertThat(placement.latest("llm-a").map(record -> record.model())).as(browser.text("main")).contains(name);
            String id = placement.latest("llm-a").orElseThrow().id();
            browser.go("/console/models");
            browser.waitUpTo(Duration.ofSeconds(60)).until(driver -> browser.count("[data-placement='" + id + "']") == 1);
            browser.screenshot("models-placement-started");
        }
        catalogue.remove(name, "browser-test");
    }

    private static String firstOrNull(List<String> values) {
        return values.isEmpty() ? null : values.getFirst();
    }
}
