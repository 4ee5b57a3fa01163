package io.macfleet.console;

import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.StatusColumn;
import io.macfleet.fleet.Status;
import io.macfleet.fleet.MachineRow;
import io.macfleet.fleet.FleetStatus;
import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.console.columns.CablingColumn;
import io.macfleet.console.columns.DriftColumn;
import io.macfleet.console.columns.InferenceColumn;
import io.macfleet.console.columns.MacosColumn;
import io.macfleet.console.columns.ProvisioningColumn;
import io.macfleet.console.columns.RdmaColumn;
import io.macfleet.console.columns.ReachableColumn;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.facts.FactsGatherer;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.MacosSamples;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.Inventory;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.supervision.ClusterObservation;
import io.macfleet.supervision.ClusterStatus;
import io.macfleet.supervision.Diagnosis;
import io.macfleet.supervision.RankObservation;
import io.macfleet.supervision.SharedStatus;
import io.macfleet.supervision.SupervisedCluster;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's page models as pure functions of the fleet state: the example inventory (llm-a, four Mac Studios) with
 * the real macOS samples as studio-01's latest facts and nothing gathered from the others. No SSH, no database, no HTTP.
 */
class ConsolePageModelsTest {

    private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");
    private static final Pages.Layout LAYOUT = new Pages.Layout("test", "overview", Viewer.anonymous());

    @TempDir
    Path directory;

    private Inventory inventory;
    private Map<String, FactsObservation> observations;

    @BeforeEach
    void exampleWithOneMachineGathered() throws Exception {
        ExampleInventory.writeTo(directory, true);
        LoadResult loaded = InventoryLoader.load(directory);
        assertThat(loaded.errors()).isEmpty();
        inventory = loaded.inventory();
        Map<String, String> outputs = MacosSamples.outputs();
        observations = Map.of("studio-01", new FactsObservation(FactsGatherer.parse("studio-01", NOW.minusSeconds(300), outputs), outputs));
    }

    private static List<StatusColumn> builtIn() {
        return List.of(new ReachableColumn(Duration.ofHours(1)), new MacosColumn(), new RdmaColumn(), new CablingColumn(), new DriftColumn(),
                new ProvisioningColumn(), new InferenceColumn());
    }

    private FleetStatus.Fleet fleet(List<StatusColumn> columns) {
        Map<String, CablingReport> cabling = new LinkedHashMap<>();
        cabling.put("llm-a", ClusterCabling.cluster(inventory.cluster("llm-a").orElseThrow(), inventory.machinesOf("llm-a"), observations,
                ClusterCabling.Unreadable.COUNT_AS_MISSING).check());
        return FleetStatus.fleet(NOW, inventory, observations, cabling, Map.of(), columns);
    }

    private static MachineRow row(Pages.OverviewTable table, String machine) {
        return table.rows().stream().filter(row -> row.name().equals(machine)).findFirst().orElseThrow();
    }

    @Test
    void theOverviewTableHasEveryMachineWithABuiltInCellPerColumn() {
        Pages.OverviewTable table = OverviewPage.table(fleet(builtIn()), "", "all");

        assertThat(table.columns()).containsExactly("Reachable", "macOS", "RDMA", "Cabling", "Drift", "Provisioning", "Inference");
        assertThat(table.machineCount()).isEqualTo(4);
        assertThat(table.rows()).allSatisfy(row -> assertThat(row.cells()).hasSize(7));
        MachineRow gathered = row(table, "studio-01");
        assertThat(gathered.status("Reachable").orElseThrow().label()).isEqualTo("seen 5 min ago");
        assertThat(gathered.status("macOS").orElseThrow()).satisfies(status -> {
            assertThat(status.label()).isEqualTo("26.2");
            assertThat(status.level()).isEqualTo(Status.Level.OK);
        });
        // The sample is another Mac than the inventory's studio-01: its serial number differs.
        assertThat(gathered.status("Drift").orElseThrow().label()).contains("serialNumber");
        assertThat(row(table, "studio-03").status("Reachable").orElseThrow().label()).isEqualTo("never reached");
        assertThat(row(table, "studio-03").status("Drift").orElseThrow().label()).isEqualTo("unknown");
        assertThat(row(table, "studio-03").status("Inference").orElseThrow().label()).isEqualTo("not deployed");
        assertThat(table.refreshUrl()).isEqualTo("/console/fleet-table");
    }

    @Test
    void theInferenceColumnShowsEachMachinesRankAsTheSupervisorLastSawIt() {
        Map<String, CablingReport> cabling = new LinkedHashMap<>();
        cabling.put("llm-a", ClusterCabling.cluster(inventory.cluster("llm-a").orElseThrow(), inventory.machinesOf("llm-a"), observations,
                ClusterCabling.Unreadable.COUNT_AS_MISSING).check());
        NodeDeploymentStore.Deployment serving = serving();
        SupervisedCluster supervised = supervisedOnTwo();
        Instant seen = NOW.minusSeconds(20);
        ClusterObservation observation = new ClusterObservation(supervised, seen, List.of(
                rank(0, "studio-01", RankObservation.Health.DEGRADED, "rank 1 is missing"),
                rank(1, "studio-02", RankObservation.Health.UNREACHABLE, "connection refused")));
        FleetStatus.Nodes nodes = new FleetStatus.Nodes(Map.of("llm-a", serving), Map.of("llm-a", observation));

        FleetStatus.Fleet fleet = FleetStatus.fleet(NOW, inventory, observations, cabling, Map.of(), builtIn(), Map.of(), nodes);

        Status coordinator = fleet.machine("studio-01").orElseThrow().status("Inference").orElseThrow();
        assertThat(coordinator.label()).isEqualTo("rank 0 degraded");
        assertThat(coordinator.detail()).contains("deployment 7", "llama-70b-q8_0.gguf", "rank 1 is missing", "20 s ago", "2026-11-23 11:59:40 UTC");
        Status worker = fleet.machine("studio-02").orElseThrow().status("Inference").orElseThrow();
        assertThat(worker.label()).isEqualTo("rank 1 down");
        assertThat(worker.isProblem()).isTrue();
        // Deployed, but the supervisor has no rank on it: what macfleet deployed, without a health it has not seen.
        assertThat(fleet.machine("studio-03").orElseThrow().status("Inference").orElseThrow().label()).isEqualTo("deployed");
        // A rank that does not serve is its machine's problem, not a reason to call the machine unready.
        assertThat(fleet.machine("studio-02").orElseThrow().notReadyBecause()).noneMatch(reason -> reason.startsWith("Inference"));

        FleetStatus.Nodes failed = new FleetStatus.Nodes(Map.of("llm-a", new NodeDeploymentStore.Deployment(8, "llm-a",
                "/opt/node.jar", "ab", "0.1.0", "https://models.example/m.gguf", "cd", 1L, "failed", "studio-03: disk full", "cli:ops", NOW, NOW,
                Optional.of(NOW))), Map.of());
        Status deployFailed = FleetStatus.fleet(NOW, inventory, observations, cabling, Map.of(), builtIn(), Map.of(), failed)
                .machine("studio-03").orElseThrow().status("Inference").orElseThrow();
        assertThat(deployFailed.label()).isEqualTo("deploy failed");
        assertThat(deployFailed.detail()).contains("deployment 8", "m.gguf", "studio-03: disk full");
    }

    /**
     * On an instance that does not supervise llm-a: the Inference column shows the supervising instance's look read from
     * the database, named as its; a stale look as "last seen", never as current; an unreadable stored one as such.
     */
    @Test
    void theInferenceColumnShowsTheSupervisingInstancesLookAndMarksAStaleOrUnreadableOne() {
        Map<String, CablingReport> cabling = new LinkedHashMap<>();
        NodeDeploymentStore.Deployment serving = serving();
        SupervisedCluster supervised = supervisedOnTwo();
        ClusterStatus status = new ClusterStatus(new ClusterObservation(supervised, NOW.minusSeconds(4), List.of(
                rank(0, "studio-01", RankObservation.Health.SERVING, ""), rank(1, "studio-02", RankObservation.Health.SERVING, ""))),
                new Diagnosis.Serving(), 0, Optional.empty(), Optional.of(NOW.minusSeconds(3600)), Optional.empty());
        String other = "4242@control-2/0a1b2c3d";

        FleetStatus.Nodes current = FleetStatus.Nodes.of(Map.of("llm-a", serving), List.of(new SharedStatus.Observed(status, Map.of(), other, false)));
        Status worker = FleetStatus.fleet(NOW, inventory, observations, cabling, Map.of(), builtIn(), Map.of(), current)
                .machine("studio-02").orElseThrow().status("Inference").orElseThrow();
        assertThat(worker.label()).isEqualTo("rank 1 serving");
        assertThat(worker.level()).isEqualTo(Status.Level.OK);
        assertThat(worker.detail()).contains("deployment 7", "4 s ago", "seen by " + other);

        FleetStatus.Nodes stale = FleetStatus.Nodes.of(Map.of("llm-a", serving), List.of(new SharedStatus.Observed(status, Map.of(), other, true)));
        Status staleWorker = FleetStatus.fleet(NOW, inventory, observations, cabling, Map.of(), builtIn(), Map.of(), stale)
                .machine("studio-02").orElseThrow().status("Inference").orElseThrow();
        assertThat(staleWorker.label()).isEqualTo("rank 1 last seen serving");
        assertThat(staleWorker.level()).isEqualTo(Status.Level.WARNING);
        assertThat(staleWorker.detail()).contains("last seen by " + other + " at 2026-11-23 11:59:56 UTC (4 s ago), no look since");

        FleetStatus.Nodes unreadable = FleetStatus.Nodes.of(Map.of("llm-a", serving), List.of(new SharedStatus.Unreadable("llm-a", NOW.minusSeconds(4),
                other, false, "Could not resolve type id 'quantum-decoherence'")));
        FleetStatus.Fleet fleet = FleetStatus.fleet(NOW, inventory, observations, cabling, Map.of(), builtIn(), Map.of(), unreadable);
        assertThat(fleet.machines()).filteredOn(row -> "llm-a".equals(row.cluster())).allSatisfy(row -> {
            Status cell = row.status("Inference").orElseThrow();
            assertThat(cell.label()).isEqualTo("unreadable status");
            assertThat(cell.detail()).contains("stored by " + other, "quantum-decoherence");
        });
    }

    /**
     * Issue 29: while the supervision says a cluster does not serve (a rank restarting in a loop), its card says "not
     * serving" with the supervision's sentence, and the overview counts it; a stale look does not decide it.
     */
    @Test
    void theClusterCardSaysNotServingWheneverTheSupervisionDoes() {
        Map<String, CablingReport> cabling = new LinkedHashMap<>();
        cabling.put("llm-a", ClusterCabling.cluster(inventory.cluster("llm-a").orElseThrow(), inventory.machinesOf("llm-a"), observations,
                ClusterCabling.Unreadable.COUNT_AS_MISSING).check());
        Diagnosis.RanksDown looping = new Diagnosis.RanksDown(List.of("rank 1 (studio-02) daemon not running, last exit code 1: its log says:"
                + " cannot listen on cluster port 8081: Address already in use (launchd restarted it, 12 runs)"), true);
        ClusterStatus status = new ClusterStatus(new ClusterObservation(supervisedOnTwo(), NOW.minusSeconds(4), List.of(
                rank(0, "studio-01", RankObservation.Health.DEGRADED, "rank 1 is missing"),
                rank(1, "studio-02", RankObservation.Health.UNREACHABLE, "connection refused"))),
                looping, 0, Optional.empty(), Optional.empty(), Optional.empty());
        FleetStatus.Nodes notServing = FleetStatus.Nodes.of(Map.of("llm-a", serving()), List.of(new SharedStatus.Observed(status, Map.of(), "me", false)));

        FleetStatus.ClusterSummary card = FleetStatus.fleet(NOW, inventory, observations, cabling, Map.of(), builtIn(), Map.of(), notServing)
                .clusters().stream().filter(cluster -> cluster.name().equals("llm-a")).findFirst().orElseThrow();
        assertThat(card.readiness().label()).isEqualTo("not serving");
        assertThat(card.readiness().isProblem()).isTrue();
        assertThat(card.readiness().detail()).contains("restarting in a loop", "Address already in use");
        Pages.OverviewTable table = new Pages.OverviewTable("now", true, 4, 0, 4, 1, List.of(card), List.of(), List.of(), "/", "all", "");
        assertThat(table.notServingCount()).isEqualTo(1);

        // The supervision page says the state once: the alert shows what it adds to it.
        assertThat(SupervisionConsoleResource.alertBeyond("gave up after 2 restart(s) of the whole cluster: " + looping.explain(), looping.explain()))
                .isEqualTo("gave up after 2 restart(s) of the whole cluster (why: the state above)");
        assertThat(SupervisionConsoleResource.alertBeyond("RDMA failed again", looping.explain())).isEqualTo("RDMA failed again");

        FleetStatus.Nodes stale = FleetStatus.Nodes.of(Map.of("llm-a", serving()), List.of(new SharedStatus.Observed(status, Map.of(), "me", true)));
        assertThat(FleetStatus.fleet(NOW, inventory, observations, cabling, Map.of(), builtIn(), Map.of(), stale).clusters().stream()
                .filter(cluster -> cluster.name().equals("llm-a")).findFirst().orElseThrow().readiness().label()).isNotEqualTo("not serving");
    }

    /** Deployment 7 of llm-a, finished and serving. */
    private static NodeDeploymentStore.Deployment serving() {
        return new NodeDeploymentStore.Deployment(7, "llm-a",
                "/opt/node.jar", "ab", "0.1.0", "/models/llama-70b-q8_0.gguf", "cd", 1L, "serving", null, "cli:ops", NOW, NOW, Optional.of(NOW));
    }

    /** llm-a as the supervisor sees it with its first two machines as ranks 0 and 1. */
    private static SupervisedCluster supervisedOnTwo() {
        return new SupervisedCluster("llm-a",
                URI.create("http://127.0.0.11:8080"), SupervisedCluster.Policy.RECOMMEND_ONLY,
                List.of(new SupervisedCluster.Rank(0, "studio-01", URI.create("http://127.0.0.11:8080"), "node", "/log"),
                        new SupervisedCluster.Rank(1, "studio-02", URI.create("http://127.0.0.12:8080"), "node", "/log")));
    }

    private static RankObservation rank(int rank, String machine, RankObservation.Health health,
                                                                String detail) {
        return new RankObservation(rank, machine, health, detail, Optional.empty(), Optional.empty(), Optional.empty(),
                RankObservation.Rdma.UNKNOWN, "", Optional.empty(), OptionalDouble.empty(),
                OptionalDouble.empty());
    }

    @Test
    void filtersNarrowTheRowsAndSayWhatTheyLeftOut() {
        FleetStatus.Fleet fleet = fleet(builtIn());
        Pages.OverviewTable ready = OverviewPage.table(fleet, "llm-a", "ready");

        assertThat(ready.rows()).isEmpty();
        assertThat(ready.emptyMessage()).isEqualTo("No machine matches cluster llm-a, ready machines.");
        assertThat(ready.refreshUrl()).isEqualTo("/console/fleet-table?cluster=llm-a&status=ready");
        assertThat(OverviewPage.table(fleet, "-", "all").rows()).isEmpty();
        assertThat(OverviewPage.checkFilters(fleet, "llm-z", "")).hasValueSatisfying(error -> assertThat(error.status()).isEqualTo(404));
        assertThat(OverviewPage.checkFilters(fleet, "", "broken")).hasValueSatisfying(error -> assertThat(error.status()).isEqualTo(400));
        assertThat(OverviewPage.checkFilters(fleet, "llm-a", "problems")).isEmpty();
        Pages.Overview page = OverviewPage.overview(LAYOUT, fleet, "llm-a", "problems");
        assertThat(page.clusterChoices()).extracting(Pages.Choice::label, Pages.Choice::selected)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("All clusters", false), org.assertj.core.groups.Tuple.tuple("llm-a", true));
    }

    @Test
    void theClusterPageListsTheCablesToLayWithThePinnedPorts() {
        Pages.Cluster page = ClusterPage.cluster(LAYOUT, fleet(builtIn()), "llm-a", List.of("provision")).orElseThrow();

        assertThat(page.portPlan()).hasSize(6);
        assertThat(page.portPlan()).extracting(row -> row.from() + " - " + row.to())
                .contains("studio-01 port 2 - studio-04 port 2", "studio-01 port 3 - studio-02 port 3");
        assertThat(page.portPlanNote()).endsWith("ports the inventory pins are used as given.");
        assertThat(page.columns()).hasSize(7);
        assertThat(page.machines()).extracting(MachineRow::name).containsExactlyInAnyOrder("studio-01", "studio-02", "studio-03", "studio-04");
        assertThat(page.summary().machines()).first().isEqualTo("studio-01");
        assertThat(page.findings()).isNotEmpty();
        assertThat(ClusterPage.cluster(LAYOUT, fleet(builtIn()), "llm-z", List.of())).isEmpty();
    }

    @Test
    void theMachinePageShowsFactsAndDriftFromTheStateAlone() {
        Pages.Machine page = MachinePage.machine(LAYOUT, fleet(builtIn()), "studio-01", Optional.empty(), List.of(), List.of()).orElseThrow();

        assertThat(page.sshPort()).isEqualTo("22");
        assertThat(page.observedAgo()).isEqualTo("5 min ago");
        assertThat(page.facts()).extracting(Pages.Fact::label).contains("Memory", "macOS", "RDMA");
        assertThat(page.drift()).extracting(difference -> difference.field()).contains("serialNumber");
        assertThat(page.hostKey().pinned()).isNull();
        assertThat(page.hostKey().recorded()).isFalse();
        assertThat(page.auditUrl()).isEqualTo("/console/audit?machine=studio-01");
        assertThat(MachinePage.machine(LAYOUT, fleet(builtIn()), "studio-03", Optional.empty(), List.of(), List.of()).orElseThrow().hasFacts()).isFalse();
        assertThat(MachinePage.machine(LAYOUT, fleet(builtIn()), "studio-99", Optional.empty(), List.of(), List.of())).isEmpty();
    }

    /** A column is a class: given to the fleet view, it takes its place by order and can make a machine a problem. */
    @Test
    void aNewColumnStandsByItsOrderAndCountsAsAProblem() {
        StatusColumn serial = new StatusColumn() {
            @Override
            public String name() {
                return "Serial";
            }

            @Override
            public int order() {
                return 250;
            }

            @Override
            public Status cell(MachineState machine) {
                String serialNumber = machine.machine().serialNumber();
                return serialNumber == null ? Status.problem("not stated", "the inventory states no serial number")
                        : Status.ok(serialNumber, "the inventory's serial number");
            }
        };
        List<StatusColumn> columns = new ArrayList<>(builtIn());
        columns.add(serial);
        FleetStatus.Fleet fleet = FleetStatus.fleet(NOW, inventory, observations, Map.of(), Map.of(), FleetStatus.sorted(columns));

        assertThat(fleet.columns()).containsExactly("Reachable", "macOS", "Serial", "RDMA", "Cabling", "Drift", "Provisioning", "Inference");
        MachineRow studio02 = fleet.machine("studio-02").orElseThrow();
        assertThat(studio02.cells().get(2).status().label()).isEqualTo("H2WQX0Y1Z2");
        MachineRow studio03 = fleet.machine("studio-03").orElseThrow();
        assertThat(studio03.status("Serial").orElseThrow().isProblem()).isTrue();
        assertThat(studio03.problemCount()).isEqualTo(studio02.problemCount() + 1);
    }

    @Test
    void theNodePanelSaysTheLatestDeploymentsStateAndOffersToResumeAnUnfinishedOne() {
        Viewer operator = new Viewer("olga", "operator", "token-1", true, false);
        assertThat(NodeConsoleResource.panel("llm-a", operator, java.util.Optional.empty()))
                .isEqualTo(new NodeConsoleResource.Panel("llm-a", operator, "", "", "never deployed", false));
        NodeDeploymentStore.Deployment failed = new NodeDeploymentStore.Deployment(3, "llm-a",
                "/opt/node.jar", "a".repeat(64), "0.1.0", "/models/tiny.gguf", "b".repeat(64), 1024, "failed",
                "studio-02: not enough free disk space", "olga", NOW, NOW, java.util.Optional.of(NOW));
        NodeConsoleResource.Panel panel = NodeConsoleResource.panel("llm-a", operator, java.util.Optional.of(failed));
        assertThat(panel.state()).isEqualTo("failed");
        assertThat(panel.stateCss()).isEqualTo("bad");
        assertThat(panel.detail()).isEqualTo("deployment 3 by olga: node 0.1.0, model tiny.gguf · studio-02: not enough free disk space");
        assertThat(panel.underWay()).isFalse();
        NodeDeploymentStore.Deployment staging = new NodeDeploymentStore.Deployment(4, "llm-a",
                "/opt/node.jar", "a".repeat(64), "0.1.0", "https://models.example/big.gguf", "b".repeat(64), 1024, "staging", null, "olga",
                NOW, NOW, java.util.Optional.empty());
        NodeConsoleResource.Panel underWay = NodeConsoleResource.panel("llm-a", operator, java.util.Optional.of(staging));
        assertThat(underWay.detail()).isEqualTo("deployment 4 by olga: node 0.1.0, model big.gguf");
        assertThat(underWay.stateCss()).isEmpty();
        assertThat(underWay.underWay()).isTrue();
    }
}
