package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.EngineConfigurations;
import io.macfleet.cabling.PeerConfiguration;
import io.macfleet.facts.FactsObservation;
import io.macfleet.simulator.SimulatedMac;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The shipped thunderbolt-network playbook on a cabled 4-Mac simulated cluster (RDMA on, bridge off, as provision
 * leaves it): every cable's /30 pair on both Macs, what ifconfig shows afterwards, a rerun that changes nothing, and a
 * Mac whose network service is missing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ThunderboltNetworkStepTest {

    static ProvisioningFixture fixture;

    @BeforeAll
    static void start() throws Exception {
        fixture = ProvisioningFixture.start(Files.createTempDirectory("macfleet-tbnet"), 4, "127.0.0.91");
        for (SimulatedMac mac : fixture.fleet.machines()) {
            mac.setRdmaEnabled(true);
            mac.setThunderboltBridgeActive(false);
        }
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static RunOutcome run() {
        return fixture.service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(), "thunderbolt-network", null, null,
                true, null), "alice", new ProvisioningListener() { });
    }

    /** The pairs cabling config --format macfleet assigns, from the same stored facts. */
    private static List<PeerConfiguration.PeerLink> assigned() {
        ClusterCabling.Cluster cluster = new ClusterCabling(fixture.facts).cluster(ProvisioningFixture.CLUSTER, Map.of());
        return PeerConfiguration.from(cluster.check(), cluster.facts()).links();
    }

    @Test
    @Order(1)
    void everyCableGetsItsPairOnBothMacsAndIfconfigShowsIt() {
        for (SimulatedMac mac : fixture.fleet.machines()) {
            assertThat(mac.snapshot().ipv4().keySet()).containsOnly("en0");
        }
        RunOutcome outcome = run();
        System.out.printf("thunderbolt-network: 4 machines, 12 cable ends configured in %d ms%n", outcome.elapsed().toMillis());
        assertThat(outcome.status()).as(summaries(outcome)).isEqualTo("succeeded");
        assertThat(fixture.steps(outcome.runId())).filteredOn(step -> step.get("step").equals("thunderbolt-addresses"))
                .hasSize(4).allMatch(step -> step.get("status").equals("done"));

        List<PeerConfiguration.PeerLink> links = assigned();
        assertThat(links).as("full mesh of 4: 6 cables, both ends").hasSize(12);
        Set<String> addresses = new HashSet<>();
        for (PeerConfiguration.PeerLink link : links) {
            assertThat(addresses.add(link.localAddress())).isTrue();
            assertThat(fixture.fleet.machine(link.machine()).snapshot().ipv4()).containsEntry(link.networkInterface(), link.localAddress() + "/30");
        }
        // The same pairs as the engine configuration of the cluster.
        ClusterCabling.Cluster cluster = new ClusterCabling(fixture.facts).cluster(ProvisioningFixture.CLUSTER, Map.of());
        String configuration = EngineConfigurations.render(EngineConfigurations.Format.MACFLEET, cluster.check(), cluster.facts(), List.of(), false);
        for (PeerConfiguration.PeerLink link : links) {
            assertThat(configuration).contains("\"localAddress\" : \"" + link.localAddress() + "\"");
        }
    }

    @Test
    @Order(2)
    void aRerunChangesNothing() {
        long setmanualBefore = fixture.auditCount("studio-01", "%networksetup -setmanual%");
        assertThat(setmanualBefore).isPositive();
        RunOutcome outcome = run();
        System.out.printf("thunderbolt-network rerun (nothing to change): 4 machines in %d ms%n", outcome.elapsed().toMillis());
        assertThat(outcome.status()).as(summaries(outcome)).isEqualTo("succeeded");
        assertThat(fixture.steps(outcome.runId())).hasSize(8).allSatisfy(step ->
                assertThat(step.get("status")).as(step.toString()).isEqualTo("skipped-already-done"));
        assertThat(fixture.auditCount("studio-01", "%networksetup -setmanual%")).isEqualTo(setmanualBefore);
        // The rerun's cabling step gathered fresh facts: what ifconfig prints now carries every address.
        Map<String, FactsObservation> observed = fixture.facts.latest(fixture.fleet.machines().stream().map(SimulatedMac::name).toList());
        for (PeerConfiguration.PeerLink link : assigned()) {
            assertThat(observed.get(link.machine()).facts().interfaces()).as(link.machine()).anySatisfy(face -> {
                assertThat(face.name()).isEqualTo(link.networkInterface());
                assertThat(face.ipv4()).contains(link.localAddress() + "/30");
            });
        }
    }

    @Test
    @Order(3)
    void aMacWithoutTheNetworkServiceFailsNamingMachineAndPort() {
        PeerConfiguration.PeerLink link = assigned().stream().filter(end -> end.machine().equals("studio-02")).findFirst().orElseThrow();
        SimulatedMac mac = fixture.fleet.machine("studio-02");
        mac.faults().deleteNetworkService("Thunderbolt " + link.port());
        mac.setIpv4(link.networkInterface(), null);

        RunOutcome outcome = run();
        assertThat(outcome.machines()).containsEntry("studio-02", "failed").containsEntry("studio-01", "ready");
        RunView.Step failed = fixture.service.run(outcome.runId()).orElseThrow().steps().stream()
                .filter(step -> step.machine().equals("studio-02") && step.step().equals("thunderbolt-addresses")).findFirst().orElseThrow();
        assertThat(failed.summary()).contains("studio-02 port Thunderbolt " + link.port() + " (" + link.networkInterface() + ", cable to " + link.peer() + ")",
                "no network service \"Thunderbolt " + link.port() + "\"", "is not a recognized network service");
        mac.faults().restoreNetworkServices();
    }

    @Test
    void readsRealGetInfoCaptures() throws Exception {
        Path samples = Path.of("src/test/resources/macos-samples/networksetup-getinfo");
        ThunderboltNetworkStep.ServiceState manual = ThunderboltNetworkStep.parseGetInfo(Files.readString(samples.resolve("manual.txt")));
        assertThat(manual).isEqualTo(new ThunderboltNetworkStep.ServiceState(Optional.empty(), "Manual Configuration", "192.168.9.2", "255.255.255.0"));
        assertThat(ThunderboltNetworkStep.parseGetInfo(Files.readString(samples.resolve("thunderbolt-bridge-self-assigned.txt"))))
                .isEqualTo(new ThunderboltNetworkStep.ServiceState(Optional.empty(), "DHCP Configuration", "169.254.2.4", "255.255.0.0"));
        assertThat(ThunderboltNetworkStep.parseGetInfo(Files.readString(samples.resolve("wi-fi-dhcp.txt"))).address()).isEqualTo("192.0.2.24");
        assertThat(ThunderboltNetworkStep.parseGetInfo(Files.readString(samples.resolve("no-address.txt"))).address()).isEmpty();
    }

    private static String summaries(RunOutcome outcome) {
        return fixture.service.run(outcome.runId()).orElseThrow().steps().stream()
                .map(step -> step.machine() + " " + step.step() + " " + step.status() + ": " + step.summary()).toList().toString();
    }
}
