package io.macfleet.cabling;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.PortReference;
import io.macfleet.inventory.Topology;
import io.macfleet.simulator.FaultStep;
import io.macfleet.simulator.LinkSpeed;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.PortRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Live cabling check: the plan from the applied inventory, the observed mesh from facts gathered over SSH from
 * simulated Mac Studios, and every cabling fault the simulator can inject giving exactly its finding.
 */
class LiveCablingTest {

    private static final List<String> FOUR = machines(4);
    /** Not in the cluster: the "outside device" a cluster machine gets cabled to. */
    private static final String OUTSIDER = "studio-07";

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;
    static ClusterCabling live;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(directory, 7, "127.0.0.41");
        live = new ClusterCabling(simulation.facts);
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @BeforeEach
    void healthyFourMachineMesh() {
        simulation.heal();
        simulation.cableFullMesh(FOUR);
    }

    private static List<String> machines(int count) {
        return IntStream.rangeClosed(1, count).mapToObj(index -> SimulatedInventory.name(index, 7)).toList();
    }

    /** Applies the cluster, gathers fresh facts of its machines (check --refresh), checks. */
    private static CablingReport check(SimulatedInventory.ClusterSpec cluster) throws Exception {
        simulation.apply(List.of(cluster), Map.of());
        ClusterCabling.Cluster checked = live.cluster(cluster.name(), Optional.of(SimulatedInventory.settings(Duration.ofSeconds(10))));
        assertThat(checked.facts()).hasSize(cluster.machines().size());
        return checked.check();
    }

    private static CablingReport checkFourMachineMesh() throws Exception {
        return check(SimulatedInventory.ClusterSpec.fullMesh("llm-a", FOUR));
    }

    private static List<Finding.Code> codes(CablingReport report) {
        return report.findings().stream().map(Finding::code).toList();
    }

    private static Topology.Link plannedCable(String a, String b) {
        return PortPlan.fullMesh("test", FOUR).cableBetween(a, b).orElseThrow();
    }

    private static PortRef end(Topology.Link cable, String machine) {
        PortReference port = cable.endOf(machine);
        return new PortRef(port.machine(), port.port());
    }

    /** A port from 2 to 6 of the machine that the four-machine plan leaves free. */
    private static int freePort(String machine) {
        return IntStream.rangeClosed(2, 6).filter(port -> simulation.fleet.cabling().at(new PortRef(machine, port)).isEmpty())
                .findFirst().orElseThrow();
    }

    @Test
    void correctFullMeshesOfTwoFourAndSixMachinesPass() throws Exception {
        for (int size : List.of(2, 4, 6)) {
            simulation.cableFullMesh(machines(size));
            CablingReport report = check(SimulatedInventory.ClusterSpec.fullMesh("mesh-" + size, machines(size)));
            assertThat(report.findings()).as("%d machines", size).isEmpty();
            assertThat(report.passed()).isTrue();
            assertThat(report.fullMesh()).isTrue();
            assertThat(report.links()).hasSize(size * (size - 1) / 2);
            assertThat(report.largestMeshedSubset()).containsExactlyInAnyOrderElementsOf(machines(size));
        }
    }

    @Test
    void anUnpluggedCableIsAMissingLink() throws Exception {
        simulation.fleet.inject(FaultStep.cable(end(plannedCable("studio-01", "studio-02"), "studio-01").toString(), "unplug"));
        CablingReport report = checkFourMachineMesh();
        assertThat(codes(report)).containsExactly(Finding.Code.MISSING_LINK);
        assertThat(report.findings().getFirst().machines()).containsExactly("studio-01", "studio-02");
        assertThat(report.passed()).isFalse();
    }

    @Test
    void aCableInTheWrongPortAgainstAnExplicitPlan() throws Exception {
        List<String> links = PortPlan.fullMesh("llm-a", FOUR).cables().stream().map(Topology.Link::toString).toList();
        PortRef planned = end(plannedCable("studio-01", "studio-02"), "studio-02");
        PortRef wrong = new PortRef("studio-02", freePort("studio-02"));
        simulation.fleet.cabling().move(planned, wrong);

        CablingReport report = check(new SimulatedInventory.ClusterSpec("llm-a", "26.2", FOUR, links));

        assertThat(codes(report)).containsExactly(Finding.Code.WRONG_PORTS);
        assertThat(report.findings().getFirst().fix()).isEqualTo("Move the cable on studio-02 from port " + wrong.port() + " to port " + planned.port() + ".");
    }

    @Test
    void aThunderbolt4CableIsASlowLink() throws Exception {
        simulation.fleet.inject(FaultStep.cable(end(plannedCable("studio-02", "studio-03"), "studio-02").toString(), "tb4"));
        assertThat(codes(checkFourMachineMesh())).containsExactly(Finding.Code.SLOW_LINK);
    }

    @Test
    void aLinkSeenFromOneSideOnly() throws Exception {
        simulation.fleet.inject(FaultStep.cable(end(plannedCable("studio-03", "studio-04"), "studio-03").toString(), "one-sided"));
        assertThat(codes(checkFourMachineMesh())).containsExactly(Finding.Code.ONE_SIDED_LINK);
    }

    @Test
    void aLinkSeenFromOneSideOnlyAgainstPinnedPortsIsOneFinding() throws Exception {
        // The demo's inventory pins every cable's ports; a one-sided cable used to be reported missing as well.
        List<String> links = PortPlan.fullMesh("llm-a", FOUR).cables().stream().map(Topology.Link::toString).toList();
        simulation.fleet.inject(FaultStep.cable(end(plannedCable("studio-01", "studio-02"), "studio-02").toString(), "one-sided"));

        CablingReport report = check(new SimulatedInventory.ClusterSpec("llm-a", "26.2", FOUR, links));

        assertThat(codes(report)).containsExactly(Finding.Code.ONE_SIDED_LINK);
    }

    @Test
    void aCableWhoseRdmaPortStaysDown() throws Exception {
        Topology.Link cable = plannedCable("studio-02", "studio-04");
        simulation.fleet.inject(FaultStep.cable(end(cable, "studio-02").toString(), "rdma-down"));

        CablingReport report = checkFourMachineMesh();

        assertThat(codes(report)).containsExactly(Finding.Code.RDMA_PORT_DOWN, Finding.Code.RDMA_PORT_DOWN);
        assertThat(report.findings()).extracting(finding -> finding.machines().getFirst()).containsExactlyInAnyOrder("studio-02", "studio-04");
        assertThat(report.findings().getFirst().message()).contains("is PORT_DOWN (ibv_devinfo), not PORT_ACTIVE");
        assertThat(report.passed()).isFalse();

        simulation.fleet.inject(FaultStep.cable(end(cable, "studio-02").toString(), "clear"));
        assertThat(codes(checkFourMachineMesh())).isEmpty();
    }

    @Test
    void everyMachineOnOneVersionThatIsNotTheTarget() throws Exception {
        FOUR.forEach(machine -> simulation.fleet.machine(machine).setRelease(MacosRelease.of("26.1")));
        CablingReport report = checkFourMachineMesh();
        assertThat(codes(report)).containsExactly(Finding.Code.MACOS_VERSION_MISMATCH);
        assertThat(report.findings().getFirst().machines()).containsExactlyElementsOf(FOUR);
    }

    @Test
    void anExtraCableBetweenAPairIsADuplicateLink() throws Exception {
        simulation.fleet.cabling().plug("studio-01:" + freePort("studio-01"), "studio-04:" + freePort("studio-04"), LinkSpeed.TB5);
        CablingReport report = checkFourMachineMesh();
        assertThat(codes(report)).containsExactly(Finding.Code.DUPLICATE_LINK);
        assertThat(report.passed()).isTrue();
    }

    @Test
    void aCableToAMacOutsideTheClusterIsAnOutsideDevice() throws Exception {
        simulation.fleet.cabling().plug("studio-02:" + freePort("studio-02"), OUTSIDER + ":2", LinkSpeed.TB5);
        assertThat(codes(checkFourMachineMesh())).containsExactly(Finding.Code.OUTSIDE_DEVICE);
    }

    @Test
    void aClusterCableInThePortThatCannotCarryRdma() throws Exception {
        simulation.fleet.cabling().move(end(plannedCable("studio-01", "studio-03"), "studio-01"), new PortRef("studio-01", 1));
        assertThat(codes(checkFourMachineMesh())).containsExactly(Finding.Code.RDMA_INCAPABLE_PORT);
    }

    @Test
    void anActiveThunderboltBridge() throws Exception {
        simulation.fleet.machine("studio-03").setThunderboltBridgeActive(true);
        CablingReport report = checkFourMachineMesh();
        assertThat(codes(report)).containsExactly(Finding.Code.BRIDGE_ACTIVE);
        assertThat(report.findings().getFirst().machines()).containsExactly("studio-03");
    }

    @Test
    void rdmaOffOnOneMachine() throws Exception {
        simulation.fleet.machine("studio-04").setRdmaEnabled(false);
        CablingReport report = checkFourMachineMesh();
        assertThat(codes(report)).containsExactly(Finding.Code.RDMA_DISABLED);
        assertThat(report.findings().getFirst().machines()).containsExactly("studio-04");
    }

    @Test
    void macosVersionsThatDiffer() throws Exception {
        simulation.fleet.machine("studio-02").setRelease(MacosRelease.of("26.1"));
        assertThat(codes(checkFourMachineMesh())).containsExactly(Finding.Code.MACOS_VERSION_MISMATCH);
    }

    @Test
    void aMachineWhoseFactsCannotBeGatheredIsReportedNotSkipped() throws Exception {
        List<String> three = List.of("studio-05", "studio-06", OUTSIDER);
        simulation.cableFullMesh(three);
        // Only this test gathers the outsider: it has no stored facts to fall back on.
        simulation.fleet.inject(FaultStep.machine(OUTSIDER, "garbage"));
        simulation.apply(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-b", three)), Map.of());

        ClusterCabling.Cluster cluster = live.cluster("llm-b", Optional.of(SimulatedInventory.settings(Duration.ofSeconds(10))));
        CablingReport report = cluster.check();

        assertThat(cluster.facts()).extracting(MachineCablingFacts::machine).containsExactly("studio-05", "studio-06");
        assertThat(report.findings()).filteredOn(finding -> finding.code() == Finding.Code.MISSING_FACTS).singleElement()
                .satisfies(finding -> assertThat(finding.machines()).containsExactly(OUTSIDER));
        assertThat(report.passed()).isFalse();
    }
}
