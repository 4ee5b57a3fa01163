package io.macfleet.facts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.database.Jdbc;
import io.macfleet.simulator.FaultStep;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.PortRef;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Facts gathered over real SSH from simulated Mac Studios, stored in H2; faults per machine; drift. */
class FactsGatheringTest {

    private static final List<String> CLUSTER = List.of("studio-01", "studio-02", "studio-03", "studio-04");
    private static final List<SimulatedInventory.ClusterSpec> CLUSTERS = List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-a", CLUSTER));

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;
    static FactsService facts;

    @BeforeAll
    static void start() throws Exception {
        // studio-05 is in no cluster: the destructive host key test uses it.
        simulation = SimulatedInventory.start(directory, 5);
        simulation.apply(CLUSTERS, Map.of());
        simulation.cableFullMesh(CLUSTER);
        facts = simulation.facts;
    }

    @AfterEach
    void heal() {
        simulation.heal();
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    private static FactsService.Gathering gather(String cluster, List<String> machines, Duration commandTimeout) {
        return facts.gather(facts.select(cluster, machines), SimulatedInventory.settings(commandTimeout));
    }

    private static MachineResult<MachineFacts> result(FactsService.Gathering gathering, String machine) {
        return gathering.results().stream().filter(result -> result.machine().equals(machine)).findFirst().orElseThrow();
    }

    @Test
    void factsOfASimulatedClusterAreWhatTheSimulatorModels() {
        FactsService.Gathering gathering = gather("llm-a", List.of(), Duration.ofSeconds(10));

        assertThat(gathering.results()).extracting(MachineResult::machine).containsExactlyElementsOf(CLUSTER);
        assertThat(gathering.results()).allSatisfy(result -> assertThat(result.error()).isNull());
        SimulatedFleet fleet = simulation.fleet;
        for (String name : CLUSTER) {
            SimulatedMac mac = fleet.machine(name);
            SimulatedMac.Snapshot state = mac.snapshot();
            MachineFacts observed = result(gathering, name).value();
            assertThat(observed.machine()).isEqualTo(name);
            assertThat(observed.modelIdentifier()).isEqualTo("Mac15,14");
            assertThat(observed.modelName()).isEqualTo("Mac Studio");
            assertThat(observed.chip()).isEqualTo("Apple M3 Ultra");
            assertThat(observed.cpuCores()).isEqualTo(mac.spec().cpuCores()).isEqualTo(32);
            assertThat(observed.gpuCores()).isEqualTo(mac.spec().gpuCores()).isEqualTo(80);
            assertThat(observed.performanceCores()).isEqualTo(24);
            assertThat(observed.efficiencyCores()).isEqualTo(8);
            assertThat(observed.memoryBytes()).isEqualTo(mac.spec().memoryBytes());
            assertThat(observed.memoryGigabytes()).isEqualTo(mac.spec().memoryGb());
            assertThat(observed.serialNumber()).isEqualTo(mac.spec().serialNumber());
            assertThat(observed.hardwareUuid()).isEqualTo(mac.spec().hardwareUuid());
            assertThat(observed.macosVersion()).isEqualTo("26.2");
            assertThat(observed.macosBuild()).isEqualTo(MacosRelease.of("26.2").build()).isEqualTo("25C56");
            assertThat(observed.rdmaEnabled()).isTrue();
            assertThat(observed.rdmaDevices()).containsExactly("rdma_en2", "rdma_en3", "rdma_en4", "rdma_en5", "rdma_en6", "rdma_en7");
            assertThat(observed.thunderboltBridgeActive()).isFalse();
            assertThat(observed.bootstrapTokenSupportedOnServer()).isEqualTo(state.mdmEnrolled());
            assertThat(observed.bootstrapTokenEscrowed()).isEqualTo(state.bootstrapTokenEscrowed());
            assertThat(observed.uptimeSeconds()).isBetween(0L, 3600L);
            // df -k / answers in 1024-byte blocks as macOS does (the figures of macos-samples/df/df-k-root.txt).
            assertThat(observed.freeDiskBytes()).isEqualTo(1_739_870_612L * 1024);
            assertThat(observed.interfaces()).filteredOn(face -> face.name().equals("en0")).singleElement()
                    .satisfies(face -> assertThat(face.ipv4()).containsExactly(mac.address() + "/24"));

            assertThat(observed.thunderboltPorts()).extracting(MachineFacts.ThunderboltPort::port).containsExactly(1, 2, 3, 4, 5, 6);
            for (MachineFacts.ThunderboltPort port : observed.thunderboltPorts()) {
                assertThat(port.interfaceName()).isEqualTo("en" + (port.port() + 1));
                PortRef here = new PortRef(name, port.port());
                var cable = fleet.cabling().at(here);
                assertThat(port.connected()).as(here.toString()).isEqualTo(cable.isPresent());
                if (cable.isPresent()) {
                    PortRef far = cable.get().peerSeenFrom(here);
                    assertThat(port.speedGbps()).isEqualTo(80.0);
                    assertThat(port.peerModel()).isEqualTo("Mac15,14");
                    assertThat(port.peerMachine()).isEqualTo(far.machine());
                    assertThat(port.peerPort()).isEqualTo(far.port());
                } else {
                    assertThat(port.peerMachine()).isNull();
                }
            }
            // Each machine of a 4-machine mesh has 3 cables.
            assertThat(observed.thunderboltPorts()).filteredOn(MachineFacts.ThunderboltPort::connected).hasSize(3);

            FactsObservation stored = facts.latest(name).orElseThrow();
            assertThat(stored.facts()).isEqualTo(observed);
            assertThat(stored.outputs()).containsKeys("sw_vers", "system_profiler SPThunderboltDataType -json", "df -k /", "uptime");
            assertThat(facts.history(name).getFirst()).isEqualTo(observed);
        }
    }

    @Test
    void aHungMachineTimesOutWhileTheOthersFinish() {
        int storedBefore = facts.history("studio-02").size();
        simulation.fleet.inject(FaultStep.machine("studio-02", "hang"));

        FactsService.Gathering gathering = gather("llm-a", List.of(), Duration.ofMillis(1500));

        assertThat(gathering.elapsed()).isLessThan(Duration.ofSeconds(10));
        MachineResult<MachineFacts> hung = result(gathering, "studio-02");
        assertThat(hung.succeeded()).isFalse();
        // The command's own timeout or the machine's one deadline, whichever notices first (a race under load): a timeout either way.
        assertThat(hung.error()).isInstanceOf(FactsGatheringException.class).hasMessageStartingWith("studio-02: `sw_vers`: ")
                .hasMessageContaining("did not finish within the command timeout of ");
        assertThat(gathering.results()).filteredOn(MachineResult::succeeded).extracting(MachineResult::machine)
                .containsExactly("studio-01", "studio-03", "studio-04");
        assertThat(gathering.failed()).isEqualTo(1);
        assertThat(facts.history("studio-02")).hasSize(storedBefore);
    }

    @Test
    void garbageOutputIsAClearErrorAndNothingIsStored() {
        int storedBefore = facts.history("studio-03").size();
        simulation.fleet.inject(FaultStep.machine("studio-03", "garbage"));

        FactsService.Gathering gathering = gather(null, List.of("studio-03", "studio-01"), Duration.ofSeconds(10));

        MachineResult<MachineFacts> garbled = result(gathering, "studio-03");
        assertThat(garbled.error()).isInstanceOf(FactsGatheringException.class)
                .hasMessage("studio-03: `sw_vers`: sw_vers: no ProductVersion: line");
        assertThat(((FactsGatheringException) garbled.error()).command()).isEqualTo("sw_vers");
        assertThat(result(gathering, "studio-01").succeeded()).isTrue();
        assertThat(facts.history("studio-03")).hasSize(storedBefore);
    }

    @Test
    void anUnreadableOptionalFactCostsOnlyThatFact() {
        int storedBefore = facts.history("studio-03").size();
        // Only `profiles` answers garbage on studio-03; every other command answers as macOS does.
        simulation.fleet.machine("studio-03").faults().garbleProgram("profiles");

        FactsService.Gathering gathering = gather(null, List.of("studio-03", "studio-01"), Duration.ofSeconds(10));

        MachineResult<MachineFacts> partial = result(gathering, "studio-03");
        assertThat(partial.error()).isNull();
        MachineFacts observed = partial.value();
        assertThat(observed.macosVersion()).isEqualTo("26.2");
        assertThat(observed.serialNumber()).isEqualTo(simulation.fleet.machine("studio-03").spec().serialNumber());
        assertThat(observed.thunderboltPorts()).filteredOn(MachineFacts.ThunderboltPort::connected).hasSize(3);
        assertThat(observed.read(FactsGatherer.BOOTSTRAP_TOKEN_FACT)).isFalse();
        assertThat(observed.read(FactsGatherer.UPTIME_FACT)).isTrue();
        assertThat(observed.unreadableFacts()).containsOnlyKeys(FactsGatherer.BOOTSTRAP_TOKEN_FACT);
        assertThat(observed.unreadableFacts().get(FactsGatherer.BOOTSTRAP_TOKEN_FACT))
                .startsWith("`profiles status -type bootstraptoken`: ");
        assertThat(result(gathering, "studio-01").value().unreadableFacts()).isEmpty();

        // Stored with the other facts, the error kept with them and as the machine's last error.
        assertThat(facts.history("studio-03")).hasSize(storedBefore + 1);
        assertThat(facts.latest("studio-03").orElseThrow().facts()).isEqualTo(observed);
        var reached = new io.macfleet.facts.ObservationStore(simulation.dataSource).of("studio-03").orElseThrow();
        assertThat(reached.reachable()).isTrue();
        assertThat(reached.lastError()).hasValueSatisfying(error -> assertThat(error)
                .startsWith("bootstrap token unreadable: `profiles status -type bootstraptoken`: "));
        assertThat(FactsText.text(observed)).contains("bootstrap token:     unknown (unreadable)")
                .contains("unreadable facts (the others above were read):\n  bootstrap token: `profiles status -type bootstraptoken`: ");

        // The next gathering that reads it clears the error.
        simulation.heal();
        FactsService.Gathering healed = gather(null, List.of("studio-03"), Duration.ofSeconds(10));
        assertThat(result(healed, "studio-03").value().unreadableFacts()).isEmpty();
        assertThat(new io.macfleet.facts.ObservationStore(simulation.dataSource).of("studio-03").orElseThrow().lastError()).isEmpty();
    }

    @Test
    void anUnreadableEssentialFactStillFailsTheMachine() {
        int storedBefore = facts.history("studio-03").size();
        simulation.fleet.machine("studio-03").faults().garbleProgram("sw_vers");

        FactsService.Gathering gathering = gather(null, List.of("studio-03"), Duration.ofSeconds(10));

        assertThat(result(gathering, "studio-03").error()).isInstanceOf(FactsGatheringException.class)
                .hasMessageStartingWith("studio-03: `sw_vers`: ");
        assertThat(facts.history("studio-03")).hasSize(storedBefore);
    }

    @Test
    void aDroppedConnectionIsRetriedBecauseFactsAreReads() {
        simulation.fleet.inject(FaultStep.machine("studio-04", "drop-connection"));

        FactsService.Gathering gathering = gather(null, List.of("studio-04"), Duration.ofSeconds(10));

        MachineResult<MachineFacts> dropped = result(gathering, "studio-04");
        assertThat(dropped.error()).hasMessageStartingWith("studio-04: `sw_vers`: ").hasCauseInstanceOf(SshException.ConnectionDropped.class);
        List<String> audited = Jdbc.withConnection(simulation.dataSource, connection -> Jdbc.query(connection,
                "select detail from audit_event where machine = ? and action = 'ssh.exec' order by id", row -> row.getString(1), "studio-04"));
        // The simulated fault drops every connection, so the second attempt fails too; what matters is that it was made.
        assertThat(audited).anySatisfy(detail -> assertThat(detail).startsWith("sw_vers [connection dropped").doesNotContain("attempt 2"));
        assertThat(audited).anySatisfy(detail -> assertThat(detail).startsWith("sw_vers [").contains("attempt 2"));
    }

    @Test
    void aChangedHostKeyIsRefusedAndNothingIsStored() {
        FactsService.Gathering first = gather(null, List.of("studio-05"), Duration.ofSeconds(10));
        assertThat(first.failed()).isZero();
        int storedBefore = facts.history("studio-05").size();

        simulation.fleet.changeHostKey("studio-05");
        FactsService.Gathering second = gather(null, List.of("studio-05"), Duration.ofSeconds(10));

        MachineResult<MachineFacts> refused = result(second, "studio-05");
        assertThat(refused.error()).isInstanceOf(FactsGatheringException.class).hasRootCauseInstanceOf(SshException.HostKeyChanged.class)
                .hasMessageContaining("studio-05");
        assertThat(facts.history("studio-05")).hasSize(storedBefore);
    }

    @Test
    void driftAgainstTheInventory() throws Exception {
        try {
            simulation.apply(CLUSTERS, Map.of("studio-04", 512));
            simulation.fleet.machine("studio-03").setRelease(MacosRelease.of("26.1"));
            assertThat(gather("llm-a", List.of(), Duration.ofSeconds(10)).failed()).isZero();

            List<Drift.Report> reports = facts.drift(facts.select("llm-a", List.of()));

            assertThat(reports).extracting(Drift.Report::machine).containsExactlyElementsOf(CLUSTER);
            assertThat(reports).filteredOn(Drift.Report::drifted).extracting(Drift.Report::machine).containsExactly("studio-03", "studio-04");
            assertThat(reports.get(2).differences()).singleElement().satisfies(difference -> {
                assertThat(difference.field()).isEqualTo("macosVersion");
                assertThat(difference.expected()).isEqualTo("26.2");
                assertThat(difference.observed()).isEqualTo("26.1");
                assertThat(difference.message()).isEqualTo("studio-03: runs macOS 26.1 (25B78), the cluster llm-a targets 26.2");
            });
            assertThat(reports.get(3).differences()).singleElement().satisfies(difference -> {
                assertThat(difference.field()).isEqualTo("memoryGb");
                assertThat(difference.message()).isEqualTo("studio-04: has 256 GB of memory, the inventory says 512 GB");
            });
        } finally {
            simulation.apply(CLUSTERS, Map.of());
        }
    }

    @Test
    void aMacGatheredAloneNamesItsPeersFromTheirStoredFacts() {
        gather("llm-a", List.of(), Duration.ofSeconds(10));

        MachineFacts alone = result(gather(null, List.of("studio-02"), Duration.ofSeconds(10)), "studio-02").value();
        List<MachineFacts.ThunderboltPort> cabled = alone.thunderboltPorts().stream().filter(port -> port.peerDomainUuid() != null).toList();
        assertThat(cabled).hasSize(3);
        assertThat(cabled).extracting(MachineFacts.ThunderboltPort::peerMachine).containsExactlyInAnyOrder("studio-01", "studio-03", "studio-04");
        assertThat(cabled).allSatisfy(port -> assertThat(port.peerPort()).isNotNull());
        assertThat(FactsText.text(alone)).contains(" to studio-01 port ").doesNotContain("to a Mac");
    }

    @Test
    void unknownNamesAreRefusedBeforeAnythingRuns() {
        assertThatThrownBy(() -> facts.select(null, List.of("studio-01", "studio-99", "nope")))
                .isInstanceOf(FactsService.UnknownNameException.class)
                .hasMessage("unknown machine(s) studio-99, nope: not in the applied inventory");
        assertThatThrownBy(() -> facts.select("llm-z", List.of())).isInstanceOf(FactsService.UnknownNameException.class)
                .hasMessage("no cluster named 'llm-z' in the applied inventory (known: llm-a)");
    }
}
