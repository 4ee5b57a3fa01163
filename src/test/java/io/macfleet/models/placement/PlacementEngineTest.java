package io.macfleet.models.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.deployment.NodeDeployer;
import io.macfleet.runtime.RuntimeCluster;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.ssh.SshRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Placement on four simulated Macs cabled as a full mesh: the relays are the real {@code PlacementRelay.java} run by
 * each simulated Mac's {@code /usr/bin/java} as launch daemons (real processes), bound to the Macs' loopback
 * "Thunderbolt" addresses, fed once by the control host. One fleet for the class (base address 127.0.141.11).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PlacementEngineTest {
    private static final int CHUNK = 1 << 20;
    private static final List<String> MACS = List.of("studio-01", "studio-02", "studio-03", "studio-04");

    @TempDir
    static Path directory;
    static SimulatedPlacement placement;
    static PlacedFile model;

    @BeforeAll
    static void start() throws Exception {
        placement = SimulatedPlacement.start(directory, 4, "127.0.141.11");
        model = SimulatedPlacement.randomFile(directory, "a1b2c3d4e5f6-tiny.gguf", 24L * CHUNK + 12345, 1);
    }

    @AfterAll
    static void stop() {
        if (placement != null) {
            placement.close();
        }
    }

    @AfterEach
    void heal() {
        for (String name : MACS) {
            placement.simulation.fleet.machine(name).faults().clear();
        }
    }

    private static PlacementReport place(PlacedFile file, int chunk, NodeDeployer.Listener listener) {
        try (SshRun run = placement.openRun()) {
            return new PlacementEngine(placement.engineSettings(chunk)).place(run, "llm-a", placement.machines, List.of(file), listener);
        }
    }

    /**
     * The addresses with a TCP socket listening on this port on this host, from /proc/net/tcp and tcp6 (the JDK binds an
     * IPv4 address through an IPv6 socket, as ::ffff:a.b.c.d); a wildcard shows as 0.0.0.0 or ::.
     */
    private static Set<String> listeners(int port) throws Exception {
        Set<String> addresses = new java.util.HashSet<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            for (String line : Files.readAllLines(Path.of(table)).stream().skip(1).toList()) {
                String[] fields = line.trim().split("\\s+");
                String local = fields[1];
                if (!fields[3].equals("0A") || Integer.parseInt(local.substring(local.indexOf(':') + 1), 16) != port) {
                    continue;
                }
                String hex = local.substring(0, local.indexOf(':'));
                if (hex.length() == 32 && hex.chars().allMatch(c -> c == '0')) {
                    addresses.add("::");
                    continue;
                }
                if (hex.length() == 32 && !hex.startsWith("0000000000000000FFFF0000")) {
                    addresses.add(hex);
                    continue;
                }
                // The IPv4 address in the host's (little-endian) byte order.
                long address = Long.parseLong(hex.substring(hex.length() - 8), 16);
                addresses.add((address & 0xff) + "." + (address >> 8 & 0xff) + "." + (address >> 16 & 0xff) + "." + (address >> 24 & 0xff));
            }
        }
        return addresses;
    }

    @Test
    @Order(1)
    void theControlHostSendsTheFileOnceAndEveryMacVerifiesItBeforeRenaming() throws Exception {
        Map<String, Long> progress = new ConcurrentHashMap<>();
        Set<String> listening = ConcurrentHashMap.newKeySet();
        AtomicBoolean looked = new AtomicBoolean();
        PlacementReport report = place(model, CHUNK, new NodeDeployer.Listener() {
            @Override
            public void copying(String machine, String file, long done, long total) {
                progress.merge(machine, done, Math::max);
                if (done > 0 && !looked.getAndSet(true)) {
                    try {
                        listening.addAll(listeners(placement.port));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        });

        assertThat(report.succeeded()).as(report.toString()).isTrue();
        assertThat(report.chains()).containsExactly(MACS);
        assertThat(report.bytesFromControlHost()).isEqualTo(model.size());
        assertThat(report.rounds()).isEqualTo(1);
        for (String name : MACS) {
            assertThat(report.machine(name).kind()).isEqualTo(PlacementReport.Kind.PLACED);
            assertThat(report.machine(name).bytesWritten()).isEqualTo(model.size());
            assertThat(progress.get(name)).isEqualTo(model.size());
            Path placed = placement.onMac(name, model);
            assertThat(SimulatedPlacement.sha256(placed)).as(name).isEqualTo(model.sha256());
            assertThat(placed.resolveSibling(placed.getFileName() + ".partial")).doesNotExist();
        }
        // Each relay listened on one address: the head on its management address (the control host feeds it), every
        // other Mac on its own end of the cable toward its upstream peer. Never 0.0.0.0.
        Map<String, RuntimeCluster.Machine> byName = placement.machines.stream().collect(Collectors.toMap(RuntimeCluster.Machine::name, m -> m));
        assertThat(listening).containsExactlyInAnyOrder(byName.get("studio-01").managementAddress(),
                byName.get("studio-02").thunderboltAddresses().get("studio-01"),
                byName.get("studio-03").thunderboltAddresses().get("studio-02"),
                byName.get("studio-04").thunderboltAddresses().get("studio-03"));
        assertThat(listening).doesNotContain("0.0.0.0", "::");
        // The relays, their definition and the placement's key are gone.
        for (String name : MACS) {
            SimulatedMac mac = placement.simulation.fleet.machine(name);
            assertThat(mac.launchd().labels()).doesNotContain(PlacementEngine.LABEL);
            assertThat(mac.resolve(PlacementEngine.KEY)).doesNotExist();
            assertThat(mac.resolve(PlacementEngine.PLIST)).doesNotExist();
        }
        assertThat(listeners(placement.port)).isEmpty();
    }

    @Test
    @Order(2)
    void macsThatHoldTheVerifiedFileAreSkipped() throws Exception {
        PlacementReport again = place(model, CHUNK, NodeDeployer.Listener.NONE);
        assertThat(again.machines()).allSatisfy(outcome -> assertThat(outcome.kind()).isEqualTo(PlacementReport.Kind.ALREADY_PRESENT));
        assertThat(again.bytesFromControlHost()).isZero();
        assertThat(again.rounds()).isZero();
        assertThat(placement.simulation.fleet.machine("studio-01").launchd().labels()).doesNotContain(PlacementEngine.LABEL);

        // One Mac loses it (and another holds a different file under the name): only those two get it.
        Files.delete(placement.onMac("studio-03", model));
        Files.write(placement.onMac("studio-04", model), new byte[(int) model.size()]);
        PlacementReport some = place(model, CHUNK, NodeDeployer.Listener.NONE);
        assertThat(some.succeeded()).as(some.toString()).isTrue();
        assertThat(some.machine("studio-01").kind()).isEqualTo(PlacementReport.Kind.ALREADY_PRESENT);
        assertThat(some.machine("studio-02").kind()).isEqualTo(PlacementReport.Kind.ALREADY_PRESENT);
        assertThat(some.machine("studio-03").kind()).isEqualTo(PlacementReport.Kind.PLACED);
        assertThat(some.machine("studio-04").kind()).isEqualTo(PlacementReport.Kind.PLACED);
        assertThat(some.chains()).containsExactly(List.of("studio-03", "studio-04"));
        assertThat(some.bytesFromControlHost()).isEqualTo(model.size());
        assertThat(SimulatedPlacement.sha256(placement.onMac("studio-04", model))).isEqualTo(model.sha256());
    }

    @Test
    @Order(3)
    void aDiskTooSmallIsRefusedWithTheNumbersBeforeAnythingIsSent() throws Exception {
        PlacedFile other = SimulatedPlacement.randomFile(directory, "0123456789ab-other.gguf", 6L * CHUNK, 2);
        placement.simulation.fleet.machine("studio-02").faults().setDiskAvailableKilobytes(1024);
        assertThatThrownBy(() -> place(other, CHUNK, NodeDeployer.Listener.NONE))
                .isInstanceOf(PlacementRefused.class)
                .hasMessageContaining("not enough disk space to place on llm-a (nothing was sent)")
                .hasMessageContaining("studio-02: 6.0 MiB (6291456 bytes) needed in /usr/local/macfleet/models, 1.0 MiB (1048576 bytes) available")
                .message().doesNotContain("studio-01:");
        for (String name : MACS) {
            Path onMac = placement.onMac(name, other);
            assertThat(onMac).doesNotExist();
            assertThat(onMac.resolveSibling(onMac.getFileName() + ".partial")).doesNotExist();
        }
    }

    @Test
    @Order(4)
    void aMacWithoutJavaIsRefusedByNameBeforeAnythingIsSent() throws Exception {
        PlacedFile other = SimulatedPlacement.randomFile(directory, "0123456789ab-nojava.gguf", 2L * CHUNK, 6);
        SimulatedMac withoutJava = placement.simulation.fleet.machine("studio-04");
        withoutJava.removeJava();
        try {
            assertThatThrownBy(() -> place(other, CHUNK, NodeDeployer.Listener.NONE))
                    .isInstanceOf(PlacementRefused.class)
                    .hasMessageContaining("nothing was sent")
                    .hasMessageContaining("studio-04: the placement relay needs Java 25 or later and `/usr/bin/java -version` answered"
                            + " 'The operation couldn\u2019t be completed. Unable to locate a Java Runtime.'");
        } finally {
            withoutJava.installJava();
        }
        assertThat(placement.onMac("studio-01", other)).doesNotExist();
    }

    @Test
    @Order(5)
    void aDiskThatFillsFailsThatMacWithTheNumbersWhileTheOthersFinish() throws Exception {
        PlacedFile other = SimulatedPlacement.randomFile(directory, "0123456789ab-full.gguf", 12L * CHUNK, 3);
        SimulatedMac full = placement.simulation.fleet.machine("studio-02");
        full.faults().setDaemonFileSizeLimitBytes(5L * CHUNK);
        full.faults().setDiskAvailableKilobytes(64L * 1024);
        PlacementReport report = place(other, CHUNK, NodeDeployer.Listener.NONE);

        assertThat(report.succeeded()).isFalse();
        PlacementReport.MacOutcome failed = report.machine("studio-02");
        assertThat(failed.kind()).isEqualTo(PlacementReport.Kind.FAILED);
        assertThat(failed.message()).contains("writing /usr/local/macfleet/models/0123456789ab-full.gguf.partial failed at byte 5242880 of 12582912",
                "File too large", "df -k shows 64.0 MiB (67108864 bytes) available in /usr/local/macfleet/models", "nothing renamed into place");
        Path onFull = placement.onMac("studio-02", other);
        assertThat(onFull).doesNotExist();
        assertThat(onFull.resolveSibling(onFull.getFileName() + ".partial")).doesNotExist();
        // studio-02 sits in the middle of the chain and kept forwarding: the Macs after it finished.
        assertThat(report.chains()).containsExactly(MACS);
        for (String name : List.of("studio-01", "studio-03", "studio-04")) {
            assertThat(report.machine(name).kind()).as(name).isEqualTo(PlacementReport.Kind.PLACED);
            assertThat(SimulatedPlacement.sha256(placement.onMac(name, other))).isEqualTo(other.sha256());
        }
        assertThat(report.bytesFromControlHost()).isEqualTo(other.size());
    }

    @Test
    @Order(6)
    void aHashMismatchRemovesThatMacsPartialFileAndNamesTheMacAndTheFile() throws Exception {
        PlacedFile other = SimulatedPlacement.randomFile(directory, "0123456789ab-mismatch.gguf", 8L * CHUNK, 4);
        // studio-03 holds a .partial of two whole chunks that are not this file's (a disk error, another file):
        // the relay keeps whole chunks, so only the final SHA-256 can tell.
        Path partial = placement.onMac("studio-03", other).resolveSibling("0123456789ab-mismatch.gguf.partial");
        Files.write(partial, new byte[2 * CHUNK]);
        PlacementReport report = place(other, CHUNK, NodeDeployer.Listener.NONE);

        PlacementReport.MacOutcome failed = report.machine("studio-03");
        assertThat(failed.kind()).isEqualTo(PlacementReport.Kind.FAILED);
        assertThat(failed.machine()).isEqualTo("studio-03");
        assertThat(failed.message()).contains("the SHA-256 of /usr/local/macfleet/models/0123456789ab-mismatch.gguf as received is",
                "expected " + other.sha256(), "removed /usr/local/macfleet/models/0123456789ab-mismatch.gguf.partial, nothing renamed into place");
        assertThat(partial).doesNotExist();
        assertThat(placement.onMac("studio-03", other)).doesNotExist();
        for (String name : List.of("studio-01", "studio-02", "studio-04")) {
            assertThat(report.machine(name).kind()).as(name).isEqualTo(PlacementReport.Kind.PLACED);
        }
    }

    @Test
    @Order(7)
    void afterTheRelayIsKilledMidTransferTheNextRoundResendsAtMostOneChunkPerMac() throws Exception {
        int chunk = 4 * CHUNK;
        PlacedFile big = SimulatedPlacement.randomFile(directory, "0123456789ab-big.gguf", 96L * CHUNK + 777, 5);
        AtomicBoolean killed = new AtomicBoolean();
        SimulatedMac victim = placement.simulation.fleet.machine("studio-02");
        PlacementReport report = place(big, chunk, new NodeDeployer.Listener() {
            @Override
            public void copying(String machine, String file, long done, long total) {
                if (machine.equals("studio-02") && done >= 8L * chunk && !killed.getAndSet(true)) {
                    assertThat(victim.launchd().crash(PlacementEngine.LABEL)).isTrue();
                }
            }
        });

        assertThat(killed).isTrue();
        assertThat(report.succeeded()).as(report.toString()).isTrue();
        assertThat(report.rounds()).isEqualTo(2);
        for (String name : MACS) {
            PlacementReport.MacOutcome outcome = report.machine(name);
            assertThat(outcome.kind()).isEqualTo(PlacementReport.Kind.PLACED);
            assertThat(outcome.bytesResent()).as(name + " received again").isLessThanOrEqualTo(chunk);
            assertThat(SimulatedPlacement.sha256(placement.onMac(name, big))).isEqualTo(big.sha256());
        }
        System.out.printf("resume after kill -9: bytes from the control host %d for a file of %d (%.3fx); received again per Mac: %s%n",
                report.bytesFromControlHost(), big.size(), report.bytesFromControlHost() / (double) big.size(),
                report.machines().stream().map(outcome -> outcome.machine() + " " + outcome.bytesResent()).toList());
        assertThat(report.bytesFromControlHost()).isLessThanOrEqualTo(big.size() + 2L * chunk);
    }

    @Test
    @Order(8)
    void aMacWhoseRelayCannotListenIsGivenUpAndTheChainFormsWithoutIt() throws Exception {
        PlacedFile other = SimulatedPlacement.randomFile(directory, "0123456789ab-squatted.gguf", 3L * CHUNK, 7);
        String address = placement.machines.get(2).thunderboltAddresses().get("studio-02");
        PlacementReport report;
        // Something else holds the relay's port on studio-03's end of the cable from studio-02.
        try (java.net.ServerSocket squatter = new java.net.ServerSocket(placement.port, 1, java.net.InetAddress.getByName(address))) {
            report = place(other, CHUNK, NodeDeployer.Listener.NONE);
        }
        PlacementReport.MacOutcome failed = report.machine("studio-03");
        assertThat(failed.kind()).isEqualTo(PlacementReport.Kind.FAILED);
        assertThat(failed.message()).contains("lost twice in a row while placing /usr/local/macfleet/models/0123456789ab-squatted.gguf",
                "cannot reach " + address + ":" + placement.port, "its relay's log ends:", "Address already in use");
        assertThat(report.chains()).containsExactly(MACS, List.of("studio-01", "studio-02", "studio-04"));
        for (String name : List.of("studio-01", "studio-02", "studio-04")) {
            assertThat(report.machine(name).kind()).as(name).isEqualTo(PlacementReport.Kind.PLACED);
            assertThat(SimulatedPlacement.sha256(placement.onMac(name, other))).isEqualTo(other.sha256());
        }
    }
}
