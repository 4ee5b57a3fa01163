package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.cabling.PortPlan;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Topology;
import io.macfleet.simulator.FaultStep;
import io.macfleet.testing.SimulatedCluster;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Every console page against a simulated cluster: 4 Mac Studios in llm-a (facts gathered over real SSH; the
 * inventory says studio-04 has 512 GB, it has 256: drift) and studio-05 in no cluster, never gathered.
 */
@QuarkusTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsolePagesTest {

    private static final List<String> CLUSTER = SimulatedCluster.MEMBERS;
    static SimulatedCluster simulation;
    static boolean prepared;

    @Inject
    DesiredStateStore store;

    @Inject
    FactsService facts;

    @Inject
    JdbcAuditLog audit;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedCluster.start("console-pages", 5, "127.0.3.1");
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @BeforeEach
    void applyAndGatherOnce() throws Exception {
        if (prepared) {
            return;
        }
        simulation.apply(store, "console-test", Map.of("studio-04", 512));
        gather();
        prepared = true;
    }

    private void gather() {
        simulation.gather(facts);
    }

    private static TestAccounts.Session viewer;

    static io.restassured.specification.RequestSpecification signedIn() {
        if (viewer == null) {
            viewer = TestAccounts.login(Role.VIEWER);
        }
        return viewer.withoutCsrf();
    }

    static Document page(String path) {
        return Jsoup.parse(signedIn().when().get(path).then().statusCode(200).contentType("text/html").extract().asString());
    }

    private static List<String> machineOrder(Document page) {
        return page.select("table.machines tbody tr").eachAttr("data-machine");
    }

    private static Element row(Document page, String machine) {
        return page.selectFirst("table.machines tbody tr[data-machine=" + machine + "]");
    }

    @Test
    @Order(1)
    void overviewShowsEveryMachineProblemsFirstWithCounts() {
        Document overview = page("/console");
        assertThat(overview.select(".counts").text()).contains("5 machines").contains("2 with problems").contains("3 ready").contains("1 clusters");
        // studio-04 (memory drift) and studio-05 (never reached) first, then the healthy ones by cluster and name.
        assertThat(machineOrder(overview)).containsExactly("studio-04", "studio-05", "studio-01", "studio-02", "studio-03");
        assertThat(row(overview, "studio-04").select("td.status .badge").eachText())
                .containsExactly(row(overview, "studio-04").select("td.status .badge").first().text(), "26.2", "enabled", "passed", "memoryGb",
                        "not provisioned yet", "not deployed");
        assertThat(row(overview, "studio-04").select("td.status .badge.bad").text()).isEqualTo("memoryGb");
        assertThat(row(overview, "studio-01").select("td.status .badge").first().text()).matches("seen \\d+ s ago");
        assertThat(row(overview, "studio-05").select("td.status .badge").first().text()).isEqualTo("never reached");
        assertThat(row(overview, "studio-05").select("td").get(0).text()).isEqualTo("none");
        assertThat(row(overview, "studio-04").hasClass("problem")).isTrue();
        assertThat(row(overview, "studio-01").hasClass("problem")).isFalse();
        assertThat(overview.select(".cluster-cards .card h2").text()).isEqualTo("llm-a");
        // Issue 13, one notion of ready: a cluster with a member held back (studio-04's memory drift) is not ready, even
        // though its cabling passes; the card names the member.
        assertThat(overview.select(".cluster-cards .card").text()).contains("Cabling: passed").contains("not ready")
                .doesNotContain("ready for tensor parallelism");
        assertThat(overview.select(".cluster-cards .card .badge.bad").attr("title")).isEqualTo("1 of 4 machines not ready: studio-04");
        assertThat(overview.select("table.machines thead th[scope=col]").eachText())
                .containsExactly("Machine", "Cluster", "Reachable", "macOS", "RDMA", "Cabling", "Drift", "Provisioning", "Inference");
    }

    @Test
    @Order(2)
    void filtersAreQueryParametersAndTheLiveRegionKeepsThem() {
        Document problems = page("/console?status=problems");
        assertThat(machineOrder(problems)).containsExactly("studio-04", "studio-05");
        assertThat(problems.select("#fleet").attr("hx-get")).isEqualTo("/console/fleet-table?status=problems");
        assertThat(problems.select("#fleet").attr("hx-trigger")).isEqualTo("every 5s");
        assertThat(problems.select(".segmented a.selected").text()).isEqualTo("problems");
        // Choosing a cluster keeps the status filter.
        assertThat(problems.select("form.filters input[name=status]").val()).isEqualTo("problems");
        assertThat(problems.select(".segmented a").eachAttr("href")).containsExactly("/console", "/console?status=problems", "/console?status=ready");

        assertThat(machineOrder(page("/console?status=ready"))).containsExactly("studio-01", "studio-02", "studio-03");
        Document cluster = page("/console?cluster=llm-a&status=ready");
        assertThat(machineOrder(cluster)).containsExactly("studio-01", "studio-02", "studio-03");
        assertThat(cluster.select("#fleet").attr("hx-get")).isEqualTo("/console/fleet-table?cluster=llm-a&status=ready");
        assertThat(cluster.select("select[name=cluster] option[selected]").val()).isEqualTo("llm-a");
        assertThat(machineOrder(page("/console?cluster=-"))).containsExactly("studio-05");

        // The fragment htmx fetches: the counts and the table, no page around them.
        String fragment = signedIn().when().get("/console/fleet-table?cluster=llm-a").then().statusCode(200)
                .header("Cache-Control", "no-store").extract().asString();
        assertThat(fragment).doesNotContain("<html").doesNotContain("<nav");
        Document table = Jsoup.parseBodyFragment(fragment);
        assertThat(machineOrder(table)).containsExactly("studio-04", "studio-01", "studio-02", "studio-03");
        assertThat(table.select("#refreshed-at").text()).endsWith("UTC");
    }

    @Test
    @Order(3)
    void machinePageShowsFactsDriftPortsHostKeyAndAudit() {
        Document machine = page("/console/machines/studio-04");
        assertThat(machine.select("h1").text()).startsWith("studio-04").contains("1 problems");
        assertThat(machine.select(".crumbs a").eachText()).containsExactly("Overview", "llm-a");
        String serial = simulation.fleet.machine("studio-04").spec().serialNumber();
        assertThat(machine.select("dl.facts").first().text()).contains("Mac Studio (Mac15,14)").contains("Apple M3 Ultra")
                .contains("256 GB").contains(serial).contains("26.2");
        assertThat(machine.select("#facts-heading + p").text()).matches("Observed \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC \\(\\d+ s ago\\)\\.");
        assertThat(machine.select("table.drift tbody tr")).singleElement().satisfies(difference ->
                assertThat(difference.select("th, td").eachText()).containsExactly("memoryGb", "512", "256",
                        "studio-04: has 256 GB of memory, the inventory says 512 GB"));
        assertThat(machine.select("table.ports tbody tr")).hasSize(6);
        // Ports 2 to 4 hold the mesh's cables (ports 2..4 on the plan for four machines), each to a named peer.
        Topology.Link toStudio01 = PortPlan.fullMesh("llm-a", CLUSTER).cableBetween("studio-01", "studio-04").orElseThrow();
        Element port = machine.select("table.ports tbody tr").get(toStudio01.endOf("studio-04").port() - 1);
        assertThat(port.select("td").eachText()).contains("connected", "80 Gb/s", "studio-01 port " + toStudio01.endOf("studio-01").port());
        assertThat(port.select("a").attr("href")).isEqualTo("/console/machines/studio-01");
        assertThat(machine.select("section:has(#hostkey-heading), #drift-heading ~ dl").text())
                .contains(simulation.fleet.hostKeyFingerprint("studio-04"));
        assertThat(machine.select("table.audit tbody tr").size()).isBetween(1, 15);
        assertThat(machine.select("table.audit tbody tr").eachText()).anyMatch(text -> text.contains("ssh.exec"));
        assertThat(machine.select("a[href='/console/audit?machine=studio-04']").text()).isEqualTo("All audit entries for studio-04");
        assertThat(machine.select("#runs-heading ~ p").text()).contains("No provisioning run has included studio-04");
    }

    @Test
    @Order(4)
    void machineWithoutFactsSaysHowToGatherThem() {
        Document machine = page("/console/machines/studio-05");
        assertThat(machine.select(".empty pre").text()).isEqualTo("macfleet facts studio-05");
        assertThat(machine.select(".crumbs a").eachText()).containsExactly("Overview");
        assertThat(machine.select("dl.statuses").text()).contains("never reached");
    }

    @Test
    @Order(5)
    void clusterPageShowsTheDiagramPortPlanAndReadiness() {
        Document clusters = page("/console/clusters");
        assertThat(clusters.select("tbody tr th a").eachText()).containsExactly("llm-a");
        assertThat(clusters.select("tbody tr td").eachText()).contains("4", "full-mesh", "26.2", "passed", "not ready")
                .doesNotContain("ready for tensor parallelism");

        Document cluster = page("/console/clusters/llm-a");
        assertThat(cluster.select("h1").text()).isEqualTo("Cluster llm-a");
        assertThat(cluster.select(".readiness .badge").first().text()).isEqualTo("not ready");
        assertThat(cluster.select("figure.diagram svg")).hasSize(1);
        assertThat(cluster.select("figure.diagram svg g.cable[data-state=ok]")).hasSize(6);
        assertThat(cluster.select(".findings-panel").text()).contains("Every planned cable is in place");
        assertThat(cluster.select("table.plan tbody tr")).hasSize(6);
        assertThat(cluster.select("table.plan tbody tr td:last-child").eachText()).containsOnly("cabled, Thunderbolt 5");
        assertThat(machineOrder(cluster)).containsExactly("studio-04", "studio-01", "studio-02", "studio-03");
    }

    @Test
    @Order(6)
    void aCablingFaultShowsItsFindingAndFixOnTheClusterAndMachinePages() {
        Topology.Link cable = PortPlan.fullMesh("llm-a", CLUSTER).cableBetween("studio-02", "studio-03").orElseThrow();
        simulation.fleet.inject(FaultStep.cable(cable.endOf("studio-02").toString(), "unplug"));
        try {
            gather();
            Document cluster = page("/console/clusters/llm-a");
            Element finding = cluster.selectFirst(".findings li.finding[data-code=missing-link]");
            assertThat(finding).isNotNull();
            assertThat(finding.select("a").eachText()).containsExactly("studio-02", "studio-03");
            assertThat(finding.select(".fix").text()).startsWith("Fix:").contains("studio-02").contains("studio-03");
            assertThat(cluster.select(".readiness .badge").first().text()).isEqualTo("not ready");
            assertThat(cluster.select("figure.diagram svg g.cable[data-state=missing]")).hasSize(1);
            assertThat(cluster.select("table.plan tbody tr.problem td:last-child").eachText()).containsExactly("not cabled");
            assertThat(cluster.select("#cluster-live").attr("hx-get")).isEqualTo("/console/clusters/llm-a/live");
            String live = signedIn().when().get("/console/clusters/llm-a/live").then().statusCode(200).extract().asString();
            assertThat(live).doesNotContain("<nav").contains("data-code=\"missing-link\"");

            Document overview = page("/console?status=problems");
            assertThat(machineOrder(overview)).contains("studio-02", "studio-03");
            assertThat(row(overview, "studio-02").select("td.status .badge.bad").eachText()).contains("missing-link");
            assertThat(overview.select(".cluster-cards .card .badge.bad").eachText()).contains("1 error", "not ready");

            Document machine = page("/console/machines/studio-03");
            assertThat(machine.select("#ports-heading ~ ul.findings li").text()).contains("missing-link").contains("Fix:");
        } finally {
            simulation.recable();
            gather();
        }
    }

    @Test
    @Order(7)
    void auditSearchFiltersAndPages() {
        Instant start = Instant.parse("2026-03-01T10:00:00Z");
        for (int index = 0; index < 60; index++) {
            audit.record(new AuditEvent(start.plusSeconds(index * 60L), "paging-test", "studio-05", "console.test", "entry " + index, AuditEvent.Outcome.SUCCESS));
        }
        Document first = page("/console/audit?actor=paging-test");
        assertThat(first.select("#audit-range").text()).isEqualTo("Entries 1 to 50 of 60, newest first.");
        assertThat(first.select("table.audit tbody tr")).hasSize(50);
        assertThat(first.select("table.audit tbody tr").first().select(".detail-cell").text()).isEqualTo("entry 59");
        assertThat(first.select("a[rel=next]").attr("href")).isEqualTo("/console/audit?actor=paging-test&page=2");
        assertThat(first.select("a[rel=prev]")).isEmpty();

        Document second = page(first.select("a[rel=next]").attr("href"));
        assertThat(second.select("#audit-range").text()).isEqualTo("Entries 51 to 60 of 60, newest first.");
        assertThat(second.select("table.audit tbody tr").last().select(".detail-cell").text()).isEqualTo("entry 0");
        assertThat(second.select("a[rel=prev]").attr("href")).isEqualTo("/console/audit?actor=paging-test");

        Document searched = Jsoup.parse(signedIn().queryParam("text", "ENTRY 1").queryParam("actor", "paging-test")
                .queryParam("from", "2026-03-01T10:10").queryParam("to", "2026-03-01T10:20")
                .when().get("/console/audit").then().statusCode(200).extract().asString());
        assertThat(searched.select("table.audit .detail-cell").eachText()).containsExactly("entry 19", "entry 18", "entry 17", "entry 16",
                "entry 15", "entry 14", "entry 13", "entry 12", "entry 11", "entry 10");
        assertThat(searched.select("input[name=text]").val()).isEqualTo("ENTRY 1");
        assertThat(searched.select("input[name=from]").val()).isEqualTo("2026-03-01T10:10");

        Document byMachine = page("/console/audit?machine=studio-01");
        assertThat(byMachine.select("table.audit tbody tr td:nth-child(3)").eachText()).containsOnly("studio-01");
        assertThat(page("/console/audit?text=no-such-thing-anywhere").select(".empty").text()).contains("No audit entry matches this search");
    }

    @Test
    @Order(8)
    void operatorsDeployTheNodeFromTheClusterPageAndViewersOnlySeeItsState() {
        Document cluster = page("/console/clusters/llm-a");
        assertThat(cluster.selectFirst("section#node-deployment").attr("hx-get")).isEqualTo("/console/clusters/llm-a/node");
        Document viewerPanel = page("/console/clusters/llm-a/node");
        assertThat(viewerPanel.select(".node-state").text()).isEqualTo("never deployed");
        assertThat(viewerPanel.select("form#deploy-node")).isEmpty();
        TestAccounts.Session viewerSession = TestAccounts.login(Role.VIEWER);
        viewerSession.withoutCsrf().formParam("_csrf", viewerSession.csrfToken()).when().post("/console/clusters/llm-a/node/deploy")
                .then().statusCode(403);

        TestAccounts.Session operator = TestAccounts.login(Role.OPERATOR);
        Document operatorPanel = Jsoup.parse(operator.withoutCsrf().when().get("/console/clusters/llm-a/node").then().statusCode(200).extract().asString());
        Element form = operatorPanel.selectFirst("form#deploy-node");
        assertThat(form.attr("method")).isEqualTo("post");
        assertThat(form.attr("action")).isEqualTo("/console/clusters/llm-a/node/deploy");
        assertThat(form.select("input[name=_csrf]").val()).isEqualTo(operator.csrfToken());
        assertThat(form.select("button").text()).isEqualTo("Deploy node");
        // A forged request (the cookie without the token) is refused before anything starts.
        operator.withoutCsrf().when().post("/console/clusters/llm-a/node/deploy").then().statusCode(403);
        // The test inventory names no model: the deploy is refused, saying why, and nothing is journaled.
        Document refused = Jsoup.parse(operator.withoutCsrf().formParam("_csrf", operator.csrfToken()).when().post("/console/clusters/llm-a/node/deploy")
                .then().statusCode(409).extract().asString());
        assertThat(refused.text()).contains("Cannot deploy the node", "llm-a names no inference.model");
        operator.withoutCsrf().formParam("_csrf", operator.csrfToken()).when().post("/console/clusters/no-such-cluster/node/deploy").then().statusCode(404);
        assertThat(page("/console/clusters/llm-a/node").select(".node-state").text()).isEqualTo("never deployed");
    }
}
