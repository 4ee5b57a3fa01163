package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.browser.Browser;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * A provisioning run of the provision playbook (nine steps, four Macs, the longest states) fits a 1400 px wide
 * window: the page does not scroll sideways (a new user saw the grid overflow it). The run is written into the
 * database as the executor writes it; nothing is executed.
 */
@QuarkusTest
class RunGridWidthBrowserTest {

    private static final List<String> STEPS = List.of("reachable", "facts", "power-settings", "sshd-drop-in", "ssh-hardened",
            "thunderbolt-bridge-off", "bootstrap-token-escrowed", "rdma-enabled", "cabling");
    private static final List<String> STATES = List.of("skipped-already-done", "skipped-not-applicable", "waiting-for-operator", "failed");

    @TestHTTPResource("/")
    URL base;

    @Inject
    DataSource dataSource;

    @Test
    void theRunPageDoesNotOverflowAt1400Pixels() throws Exception {
        long run = writeRun();
        try (Browser browser = Browser.open(base.toString())) {
            ((ChromeDriver) browser.driver).executeCdpCommand("Emulation.setDeviceMetricsOverride",
                    Map.of("width", 1400, "height", 900, "deviceScaleFactor", 1, "mobile", false));
            browser.signInAndWait(TestAccounts.user(Role.OPERATOR), TestAccounts.PASSWORD);
            for (String page : List.of("/console/runs/" + run, "/console/runs")) {
                browser.go(page);
                browser.waitUpTo(Duration.ofSeconds(20)).until(driver -> browser.count("main table") > 0);
                assertThat(((Number) browser.script("return window.innerWidth;")).intValue()).isEqualTo(1400);
                long overflow = ((Number) browser.script("return document.documentElement.scrollWidth - document.documentElement.clientWidth;"))
                        .longValue();
                assertThat(overflow).as(page + " scrolls sideways by " + overflow + " px; widest: "
                        + browser.script("var widest = null; document.querySelectorAll('body *').forEach(function (e) {"
                        + " var r = e.getBoundingClientRect(); if (r.right > document.documentElement.clientWidth && (widest === null"
                        + " || r.right > widest.r)) { widest = {r: r.right, what: e.tagName + '.' + e.className + '#' + e.id}; } });"
                        + " return widest === null ? 'none' : widest.what + ' to ' + widest.r;")).isLessThanOrEqualTo(0);
            }
            // The grid itself fits: every step's column is on screen, not behind a sideways scroll of its frame.
            browser.go("/console/runs/" + run);
            browser.waitUpTo(Duration.ofSeconds(20)).until(driver -> browser.count("table.run-grid tbody tr") == 4);
            long hidden = ((Number) browser.script("var wrap = document.querySelector('table.run-grid').parentElement;"
                    + " return wrap.scrollWidth - wrap.clientWidth;")).longValue();
            assertThat(hidden).as("the run grid is wider than its frame by " + hidden + " px").isLessThanOrEqualTo(0);
            browser.screenshot("run-grid-1400");
        }
    }

    private long writeRun() throws Exception {
        OffsetDateTime now = OffsetDateTime.now();
        List<String> machines = List.of("studio-01", "studio-02", "studio-03", "studio-04");
        try (Connection connection = dataSource.getConnection()) {
            long id;
            try (PreparedStatement statement = connection.prepareStatement("insert into provisioning_run (playbook, playbook_hash, target_key,"
                    + " cluster, machines, options, status, started_by, created_at, updated_at) values ('provision', 'x', 'cluster:llm-a', 'llm-a',"
                    + " ?, '{}', 'failed', 'user:test-operator', ?, ?)", Statement.RETURN_GENERATED_KEYS)) {
                statement.setString(1, String.join(",", machines));
                statement.setObject(2, now);
                statement.setObject(3, now);
                statement.executeUpdate();
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    keys.next();
                    id = keys.getLong(1);
                }
            }
            for (int machine = 0; machine < machines.size(); machine++) {
                for (int position = 0; position < STEPS.size(); position++) {
                    try (PreparedStatement statement = connection.prepareStatement("insert into provisioning_step (run_id, machine, step, position,"
                            + " status, attempts, summary) values (?, ?, ?, ?, ?, 3, ?)")) {
                        statement.setLong(1, id);
                        statement.setString(2, machines.get(machine));
                        statement.setString(3, STEPS.get(position));
                        statement.setInt(4, position);
                        statement.setString(5, STATES.get((machine + position) % STATES.size()));
                        statement.setString(6, "a summary long enough to be a tooltip, not a cell");
                        statement.executeUpdate();
                    }
                }
            }
            return id;
        }
    }
}
