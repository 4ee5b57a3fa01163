package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.database.Jdbc;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The API and the console page of an instance that supervises nothing (supervision is off in tests), with statuses
 * that other instances stored: a current one named as theirs, a stale one as "last seen", an unreadable one as such,
 * and every answer a 200.
 */
@QuarkusTest
class SharedSupervisionStatusApiTest {

    private static final String OTHER = "9999@control-9/0badc0de";

    @Inject
    SupervisionStatusStore store;

    @Inject
    DataSource dataSource;

    @AfterEach
    void removeTheRows() {
        store.keepOnly(Set.of(), Instant.now().plusSeconds(3600));
    }

    @Test
    void statusesStoredByOtherInstancesAreListedCurrentStaleOrUnreadable() {
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        List<RankObservation> serving = List.of(ClusterSupervisorTest.rank(0, RankObservation.Health.SERVING, 1, "1.0"),
                ClusterSupervisorTest.rank(1, RankObservation.Health.SERVING, 1, "1.0"));
        store.save(SupervisionStatusStoreTest.status("llm-fresh", now, new Diagnosis.Serving(), serving, Optional.empty(), Optional.of(now)),
                Map.of(0, now.minusSeconds(90)), OTHER);
        Instant hourAgo = now.minusSeconds(3600);
        store.save(SupervisionStatusStoreTest.status("llm-gone", hourAgo, new Diagnosis.Serving(), serving, Optional.of("gave up after 3 restart(s)"),
                Optional.of(hourAgo)), Map.of(), OTHER);
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "insert into supervision_status (cluster, observed_at, observed_by, document) values (?, ?, ?, ?)",
                "llm-newer", OffsetDateTime.ofInstant(now, ZoneOffset.UTC), OTHER, "{\"status\": {\"diagnosis\": {\"kind\": \"quantum-decoherence\"}}}"));

        JsonPath api = TestAccounts.viewer().when().get("/api/v1/supervision").then().statusCode(200).extract().jsonPath();
        assertThat(api.getList("cluster", String.class)).containsExactly("llm-fresh", "llm-gone", "llm-newer");
        assertThat(api.getList("observedBy", String.class)).containsOnly(OTHER);
        assertThat(api.getList("stale", Boolean.class)).containsExactly(false, true, false);
        assertThat(api.getList("serving", Boolean.class)).containsExactly(true, false, false);
        assertThat(api.getString("[0].state")).isEqualTo("serving");
        assertThat(api.getInt("[0].ranks[0].uptimeSeconds")).isBetween(90, 120);
        assertThat(api.getString("[1].state")).startsWith("last seen by " + OTHER + " at ").endsWith(": serving");
        assertThat(api.getString("[2].state")).startsWith("unreadable status (stored by " + OTHER).contains("quantum-decoherence");
        assertThat(api.getList("[2].ranks")).isEmpty();

        TestAccounts.Session viewer = TestAccounts.login(Role.VIEWER);
        Document page = Jsoup.parse(viewer.request().when().get("/console/supervision").then().statusCode(200).extract().asString());
        assertThat(page.select("#no-supervised-clusters")).isEmpty();
        assertThat(page.select("section.supervised-cluster").eachAttr("data-cluster")).containsExactly("llm-fresh", "llm-gone", "llm-newer");
        assertThat(page.select("[data-cluster=llm-fresh] .supervision-seen").text()).startsWith("seen by " + OTHER + " at ");
        assertThat(page.select("[data-cluster=llm-fresh] h2 .badge").text()).isEqualTo("serving");
        assertThat(page.select("[data-cluster=llm-gone] .supervision-seen.stale").text()).startsWith("Not current: last seen by " + OTHER + " at ");
        assertThat(page.select("[data-cluster=llm-gone] h2 .badge").text()).isEqualTo("stale");
        assertThat(page.select("[data-cluster=llm-newer] h2 .badge").text()).isEqualTo("unreadable status");
        assertThat(page.select("[data-cluster=llm-newer]").text()).contains("quantum-decoherence");
        String banner = viewer.request().when().get("/console/supervision/banner").then().statusCode(200).extract().asString();
        assertThat(Jsoup.parse(banner).select(".banner").text()).contains("llm-gone: gave up after 3 restart(s) (last seen by " + OTHER);
    }

    @Test
    void aRebootUnderWayIsShownWithWhenItStarted() {
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        ClusterStatus down = SupervisionStatusStoreTest.status("llm-rebooting", now, new Diagnosis.RanksDown(List.of("rank 1 is missing"), false),
                List.of(ClusterSupervisorTest.rank(0, RankObservation.Health.UNREACHABLE, 1, null)), Optional.empty(), Optional.empty());
        Instant started = Instant.parse("2026-11-24T09:25:30Z");
        store.save(new ClusterStatus(down.observation(), down.diagnosis(), 0, Optional.empty(), Optional.empty(),
                Optional.of(new ClusterSupervisor.Acting("coordinated reboot", started))), Map.of(), OTHER);

        JsonPath api = TestAccounts.viewer().when().get("/api/v1/supervision").then().statusCode(200).extract().jsonPath();
        assertThat(api.getString("[0].acting")).isEqualTo("coordinated reboot");
        assertThat(api.getString("[0].actingSince")).isEqualTo("2026-11-24T09:25:30Z");
        Document page = Jsoup.parse(TestAccounts.login(Role.VIEWER).request().when().get("/console/supervision").then().statusCode(200)
                .extract().asString());
        assertThat(page.select("[data-cluster=llm-rebooting] .acting").text())
                .isEqualTo("Under way: coordinated reboot since 09:25:30 UTC; looks change nothing until it ends.");
    }
}
