package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * In a real browser: an operator starts a campaign from the OS updates page, the campaign's page follows it by itself
 * (htmx) until every machine is done; a viewer sees the same page without the start form or buttons.
 */
@QuarkusTest
class OsUpdateBrowserTest {
    static CampaignFixture fixture;

    @TestHTTPResource("/")
    URL base;

    @Inject
    DesiredStateStore store;

    @BeforeAll
    static void start() throws Exception {
        fixture = CampaignFixture.start(Files.createTempDirectory("macfleet-os-update-browser"), "127.0.4.41");
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void anOperatorStartsACampaignAndThePageFollowsItToTheEnd() throws Exception {
        store.apply(InventoryLoader.load(fixture.inventory).inventory(), "browser-test", fixture.inventory.toString());
        try (Browser browser = Browser.open(base.toString())) {
            browser.signInAndWait(TestAccounts.user(Role.OPERATOR), TestAccounts.PASSWORD);
            browser.go("/console/os-updates");
            assertThat(browser.text("#no-campaigns")).contains("No OS-update campaigns yet");
            browser.driver.findElement(By.cssSelector("#start-campaign input[name=to]")).sendKeys("26.2");
            browser.driver.findElement(By.cssSelector("#start-campaign input[name=build]")).sendKeys("25C56");
            browser.driver.findElement(By.cssSelector("#start-campaign button[type=submit]")).click();
            browser.waitUpTo(Duration.ofSeconds(10)).until(driver -> driver.getCurrentUrl().matches(".*/console/os-updates/\\d+$"));
            String url = browser.driver.getCurrentUrl();
            String id = url.substring(url.lastIndexOf('/') + 1);
            // No reload: the live part refreshes itself until the campaign ends.
            browser.waitUpTo(Duration.ofMinutes(3)).until(driver -> "succeeded".equals(browser.text("#campaign-status")));
            assertThat(browser.count("table.campaign-machines tr[data-machine] .badge.ok")).isEqualTo(4);
            assertThat(browser.text("tr[data-machine='studio-03']")).contains("done", "26.2 (25C56)", "verified: sw_vers 26.2 (25C56)");
            browser.screenshot("os-update-succeeded");
            assertThat(fixture.releases()).containsOnly("26.2 25C56");

        }
        try (Browser viewer = Browser.open(base.toString())) {
            viewer.signInAndWait(TestAccounts.user(Role.VIEWER), TestAccounts.PASSWORD);
            viewer.go("/console/os-updates");
            assertThat(viewer.count("#start-campaign")).isZero();
            assertThat(viewer.count("table.campaigns tr[data-campaign]")).isEqualTo(1);
            viewer.click("table.campaigns tr[data-campaign] a");
            viewer.waitUpTo(Duration.ofSeconds(10)).until(driver -> driver.getCurrentUrl().matches(".*/console/os-updates/\\d+$"));
            assertThat(viewer.text("#campaign-status")).isEqualTo("succeeded");
            assertThat(viewer.count("#pause") + viewer.count("#resume")).isZero();
        }
    }
}
