package io.macfleet.cabling;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.cabling.Finding.Code;
import io.macfleet.cabling.Finding.Severity;
import io.macfleet.inventory.PortReference;
import io.macfleet.inventory.Topology;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CablingCheckTest {

    private static final String[] SIX = {"studio-01", "studio-02", "studio-03", "studio-04", "studio-05", "studio-06"};

    private static String[] first(int count) {
        return java.util.Arrays.copyOf(SIX, count);
    }

    private static CablingReport check(ClusterFixture cluster) {
        return CablingCheck.check(PlannedTopology.fullMesh("llm-a", cluster.names()), cluster.facts(), Optional.of("26.2"));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4, 6})
    void correctFullMeshPasses(int count) {
        CablingReport report = check(ClusterFixture.fullMesh(first(count)));

        assertThat(report.findings()).isEmpty();
        assertThat(report.passed()).isTrue();
        assertThat(report.fullMesh()).isTrue();
        assertThat(report.links()).hasSize(count * (count - 1) / 2).allMatch(ObservedLink::confirmed);
        assertThat(report.verdict()).isEqualTo("ready for tensor parallelism over RDMA (JACCL) on all " + count + " machines");
    }

    @Test
    void missingCableIsFoundWithTheCableToPlug() {
        ClusterFixture cluster = ClusterFixture.fullMesh(first(4));
        Topology.Link removed = PortPlan.fullMesh("llm-a", cluster.names()).cableBetween("studio-01", "studio-03").orElseThrow();
        cluster.unplug("studio-01", removed.first().port(), "studio-03", removed.second().port());

        CablingReport report = check(cluster);

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.MISSING_LINK);
            assertThat(finding.severity()).isEqualTo(Severity.ERROR);
            assertThat(finding.fixedByOsUpdate()).as("a cable fixes it").isFalse();
            assertThat(finding.machines()).containsExactly("studio-01", "studio-03");
            assertThat(finding.fix()).isEqualTo("Connect a Thunderbolt 5 cable from studio-01 port " + removed.first().port()
                    + " to studio-03 port " + removed.second().port() + ".");
        });
        assertThat(report.fullMesh()).isFalse();
        assertThat(report.largestMeshedSubset()).hasSize(3);
        assertThat(report.ringOrder()).isPresent();
        assertThat(report.verdict()).startsWith("not a full mesh: pipeline parallel only; largest fully meshed subset: ");
    }

    @Test
    void thunderbolt4LinkIsFound() {
        ClusterFixture cluster = ClusterFixture.macStudios(first(2)).cable("studio-01", 3, "studio-02", 3, "40 Gb/s");

        CablingReport report = check(cluster);

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.SLOW_LINK);
            assertThat(finding.message()).isEqualTo("cable studio-01:3 <-> studio-02:3 links at 40 Gb/s, not Thunderbolt 5 (80 Gb/s); RDMA does not work over it");
            assertThat(finding.fix()).startsWith("Replace the cable between studio-01 port 3 and studio-02 port 3 with a Thunderbolt 5 cable");
        });
        assertThat(report.fullMesh()).isFalse();
    }

    @Test
    void oneSidedLinkDoesNotCount() {
        ClusterFixture cluster = ClusterFixture.macStudios(first(2)).oneSided("studio-02", 4, "studio-01", 4, "80 Gb/s");

        CablingReport report = check(cluster);

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.ONE_SIDED_LINK);
            assertThat(finding.message()).isEqualTo("studio-02 port 4 sees studio-01 port 4, but studio-01 does not see studio-02 there; the link does not count");
        });
        assertThat(report.links()).singleElement().satisfies(link -> assertThat(link.confirmed()).isFalse());
        assertThat(report.fullMesh()).isFalse();
    }

    @Test
    void oneSidedCableInItsPlannedPortsIsOneFindingNotAlsoAMissingCable() {
        ClusterFixture cluster = ClusterFixture.macStudios(first(2)).oneSided("studio-02", 4, "studio-01", 4, "80 Gb/s");
        PlannedTopology plan = new PlannedTopology("llm-a", cluster.names(), PlannedTopology.Kind.FULL_MESH, List.of(
                new Topology.Link(new PortReference("studio-01", 4), new PortReference("studio-02", 4))));

        CablingReport report = CablingCheck.check(plan, cluster.facts(), Optional.of("26.2"));

        assertThat(report.findings()).extracting(Finding::code).containsExactly(Code.ONE_SIDED_LINK);
    }

    @Test
    void everyMachineOnTheSameVersionThatIsNotTheTargetIsFound() {
        ClusterFixture cluster = ClusterFixture.fullMesh(first(2)).version("studio-01", "26.1").version("studio-02", "26.1");

        CablingReport report = check(cluster);

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.MACOS_VERSION_MISMATCH);
            assertThat(finding.fixedByOsUpdate()).as("an OS update fixes it, not the cables").isTrue();
            assertThat(finding.machines()).containsExactly("studio-01", "studio-02");
            assertThat(finding.message()).isEqualTo("every machine of cluster llm-a runs macOS 26.1, not the cluster's target 26.2");
            assertThat(finding.fix()).isEqualTo("Update studio-01, studio-02 from macOS 26.1 to 26.2.");
        });
        assertThat(report.passed()).isFalse();
        assertThat(report.verdict()).doesNotStartWith("ready");
    }

    @Test
    void cableInTheWrongPortsAgainstAnExplicitPlan() {
        ClusterFixture cluster = ClusterFixture.macStudios(first(2)).cable("studio-01", 3, "studio-02", 5);
        PlannedTopology plan = new PlannedTopology("llm-a", cluster.names(), PlannedTopology.Kind.EXPLICIT, List.of(
                new Topology.Link(new PortReference("studio-01", 2), new PortReference("studio-02", 5))));

        CablingReport report = CablingCheck.check(plan, cluster.facts(), Optional.empty());

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.WRONG_PORTS);
            assertThat(finding.message()).isEqualTo("cable between studio-01 and studio-02 is in studio-01:3 <-> studio-02:5, the plan says studio-01:2 <-> studio-02:5");
            assertThat(finding.fix()).isEqualTo("Move the cable on studio-01 from port 3 to port 2.");
        });
    }

    @Test
    void secondCableBetweenAPairIsAWarning() {
        ClusterFixture cluster = ClusterFixture.fullMesh(first(2)).cable("studio-01", 5, "studio-02", 5);

        CablingReport report = check(cluster);

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.DUPLICATE_LINK);
            assertThat(finding.severity()).isEqualTo(Severity.WARNING);
            assertThat(finding.fix()).startsWith("Remove studio-01:5 <-> studio-02:5 to free those ports");
        });
        assertThat(report.passed()).isTrue();
    }

    @Test
    void devicesOutsideTheClusterAreReported() {
        ClusterFixture cluster = ClusterFixture.fullMesh(first(2)).drive("studio-01", 5).outsideMac("studio-02", 6);

        CablingReport report = check(cluster);

        assertThat(report.findings()).extracting(Finding::code).containsExactly(Code.OUTSIDE_DEVICE, Code.OUTSIDE_DEVICE);
        assertThat(report.findings()).extracting(Finding::message).containsExactly(
                "studio-01 port 5 is cabled to Envoy Ultra",
                "studio-02 port 6 is cabled to a Mac that is not in cluster llm-a (MacBook Pro (Mac17,7))");
        assertThat(report.passed()).isTrue();
    }

    @Test
    void activeThunderboltBridgeIsAnError() {
        CablingReport report = check(ClusterFixture.fullMesh(first(2)).bridgeActive("studio-02"));

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.BRIDGE_ACTIVE);
            assertThat(finding.machines()).containsExactly("studio-02");
            assertThat(finding.fix()).contains("networksetup -setnetworkserviceenabled \"Thunderbolt Bridge\" off");
        });
        assertThat(report.verdict()).isEqualTo("cabled as a full Thunderbolt 5 mesh; fix the errors above before RDMA tensor parallelism");
    }

    @Test
    void rdmaDisabledIsAnErrorWithTheRecoverySteps() {
        CablingReport report = check(ClusterFixture.fullMesh(first(4)).rdma("studio-03", false));

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.RDMA_DISABLED);
            assertThat(finding.machines()).containsExactly("studio-03");
            assertThat(finding.fix()).contains("Utilities > Terminal, run rdma_ctl enable");
        });
    }

    @Test
    void unknownRdmaStatusIsAWarning() {
        CablingReport report = check(ClusterFixture.fullMesh(first(2)).withoutRdmaStatus("studio-01"));

        assertThat(report.findings()).extracting(Finding::code).containsExactly(Code.RDMA_STATUS_UNKNOWN);
    }

    @Test
    void cableInThePortNextToEthernetCannotCarryRdma() {
        ClusterFixture cluster = ClusterFixture.macStudios(first(2)).cable("studio-01", 1, "studio-02", 2);

        CablingReport report = check(cluster);

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.RDMA_INCAPABLE_PORT);
            assertThat(finding.message()).isEqualTo("studio-01 port 1 (en2, next to the Ethernet port) carries cable studio-01:1 <-> studio-02:2 but cannot carry RDMA");
            assertThat(finding.fix()).isEqualTo("Move that cable on studio-01 from port 1 to free port 2.");
        });
        assertThat(report.fullMesh()).isFalse();
    }

    @Test
    void differingMacosVersionsAreFound() {
        CablingReport report = check(ClusterFixture.fullMesh(first(4)).version("studio-04", "26.1"));

        assertThat(report.findings()).singleElement().satisfies(finding -> {
            assertThat(finding.code()).isEqualTo(Code.MACOS_VERSION_MISMATCH);
            assertThat(finding.machines()).containsExactly("studio-04");
            assertThat(finding.message()).contains("26.1 on studio-04; 26.2 on studio-01, studio-02, studio-03");
            assertThat(finding.fix()).isEqualTo("Update studio-04 from macOS 26.1 to 26.2.");
        });
    }

    @Test
    void machineWithoutFactsIsReported() {
        ClusterFixture cluster = ClusterFixture.fullMesh(first(2));
        PlannedTopology plan = PlannedTopology.fullMesh("llm-a", List.of("studio-01", "studio-02", "studio-03"));

        CablingReport report = CablingCheck.check(plan, cluster.facts(), Optional.empty());

        assertThat(report.findings()).extracting(Finding::code).containsExactly(Code.MISSING_FACTS);
        assertThat(report.passed()).isFalse();
    }

    @Test
    void theSuggestedRingAvoidsTheLinkTheReportCallsTooSlow() {
        // A full mesh but for one Thunderbolt 4 cable between studio-01 and studio-02: a ring in machine order would
        // take that cable, while studio-01 -> 03 -> 02 -> 04 needs none of it.
        ClusterFixture cluster = ClusterFixture.macStudios(first(4))
                .cable("studio-01", 2, "studio-02", 2, "40 Gb/s")
                .cable("studio-01", 3, "studio-03", 3)
                .cable("studio-01", 4, "studio-04", 4)
                .cable("studio-02", 3, "studio-03", 2)
                .cable("studio-02", 4, "studio-04", 2)
                .cable("studio-03", 4, "studio-04", 3);

        CablingReport report = check(cluster);

        assertThat(report.findings()).extracting(Finding::code).contains(Code.SLOW_LINK);
        assertThat(report.ringOrder()).contains(List.of("studio-01", "studio-03", "studio-02", "studio-04"));
        assertThat(report.verdict()).endsWith("ring: studio-01 -> studio-03 -> studio-02 -> studio-04 -> studio-01 (MLX ring or jaccl-ring backend)");
    }

    @Test
    void ringIsReportedWhenOnlyARingIsCabled() {
        ClusterFixture cluster = ClusterFixture.macStudios(first(4))
                .cable("studio-01", 2, "studio-02", 2)
                .cable("studio-02", 3, "studio-03", 3)
                .cable("studio-03", 2, "studio-04", 2)
                .cable("studio-04", 3, "studio-01", 3);

        CablingReport report = check(cluster);

        assertThat(report.findings()).extracting(Finding::code).containsExactly(Code.MISSING_LINK, Code.MISSING_LINK);
        assertThat(report.ringOrder()).contains(List.of("studio-01", "studio-02", "studio-03", "studio-04"));
        assertThat(report.largestMeshedSubset()).hasSize(2);
        assertThat(report.verdict()).endsWith("ring: studio-01 -> studio-02 -> studio-03 -> studio-04 -> studio-01 (MLX ring or jaccl-ring backend)");
    }
}
