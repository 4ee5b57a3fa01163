package io.macfleet.mdm.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.audit.AuditEvent;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.MdmServer;
import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.SshKeys;
import io.macfleet.simulator.mdm.SimulatedMacHost;
import io.macfleet.simulator.mdm.SimulatedNanoHub;
import io.macfleet.simulator.mdm.UpdateTimings;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `mdm status` against the simulated NanoHUB and simulated Macs: both sides of each machine's enrollment and bootstrap
 * token, and errors naming the server and the request when the server refuses the key, fails or answers garbage.
 */
class MdmStatusServiceTest {
    private static final List<Logger> QUIET = List.of(Logger.getLogger("net.schmizz"), Logger.getLogger("org.apache.sshd"));

    @TempDir
    static Path directory;
    static SimulatedFleet fleet;
    static SimulatedNanoHub hub;
    static Path privateKey;
    static Path apiKey;
    static Path wrongKey;
    static MdmStatusService service;
    static SshSettings settings;

    @BeforeAll
    static void start() throws Exception {
        QUIET.forEach(logger -> logger.setLevel(Level.WARNING));
        KeyPair key = SshKeys.generate();
        privateKey = directory.resolve("id_ecdsa");
        SshKeys.write(key, privateKey, "mdm-status-test");
        fleet = SimulatedFleet.builder(directory.resolve("state")).authorizedKey(key.getPublic())
                .macStudio("studio-01", 512, "26.1").macStudio("studio-02", 512, "26.1").macStudio("studio-03", 512, "26.1").build().start();
        hub = new SimulatedNanoHub("127.0.0.1", 0, "the-key", UpdateTimings.forTests());
        for (String name : List.of("studio-01", "studio-02")) {
            SimulatedMac mac = fleet.machine(name);
            mac.setMdmEnrolled(true);
            hub.enroll(mac.spec().hardwareUuid(), new SimulatedMacHost(fleet, mac));
        }
        fleet.machine("studio-01").setBootstrapTokenEscrowed(true);
        apiKey = directory.resolve("nanohub-key");
        Files.writeString(apiKey, "the-key\n");
        wrongKey = directory.resolve("wrong-key");
        Files.writeString(wrongKey, "not-the-key\n");
        settings = SshSettings.defaults("test").withAcceptNewHostKeys(true)
                .withLimits(new ExecutionLimits(Duration.ofSeconds(5), Duration.ofSeconds(10), 1024 * 1024));
        List<AuditEvent> audit = new ArrayList<>();
        service = new MdmStatusService(null, null, new InMemoryHostKeyStore(), audit::add);
    }

    @AfterAll
    static void stop() {
        hub.close();
        fleet.close();
    }

    @AfterEach
    void healServer() {
        hub.setFault(SimulatedNanoHub.ServerFault.NONE);
    }

    static Machine machine(String name, boolean withEnrollmentId) {
        SimulatedFleet.Endpoint endpoint = fleet.endpoint(name);
        return new Machine(name, endpoint.host(), new io.macfleet.inventory.SshSettings(fleet.sshUser(), endpoint.port(),
                SecretReference.of("file:" + privateKey), null, null), null, "Mac15,14", 512, Machine.Role.WORKER, null, List.of(),
                withEnrollmentId ? fleet.machine(name).spec().hardwareUuid() : null, null, Map.of());
    }

    static List<Machine> machines() {
        return List.of(machine("studio-01", true), machine("studio-02", true), machine("studio-03", false));
    }

    static MdmServer server(Path key) {
        return new MdmServer(hub.url().toString(), SecretReference.of("file:" + key));
    }

    @Test
    void showsTheServersAndTheMacsViewOfEachMachine() throws Exception {
        // The simulated Macs send their first declarative status report within a few ticks of enrolling.
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<MachineMdmStatus> statuses;
        do {
            statuses = service.status(machines(), server(apiKey), settings);
        } while (!Boolean.TRUE.equals(statuses.get(1).server().statusReportsReceived()) && System.nanoTime() < deadline && sleep());

        MachineMdmStatus first = statuses.getFirst();
        assertThat(first.failed()).isFalse();
        assertThat(first.enrollmentId()).isEqualTo(fleet.machine("studio-01").spec().hardwareUuid());
        assertThat(first.server().server()).isEqualTo("nanohub " + hub.url().toString().replaceFirst("/$", ""));
        assertThat(first.server().bootstrapToken()).isEqualTo("not-exposed-by-server");
        assertThat(first.mac()).isEqualTo(new MachineMdmStatus.MacView(true, false, true, true, null));

        MachineMdmStatus second = statuses.get(1);
        assertThat(second.server().statusReportsReceived()).isTrue();
        assertThat(second.server().lastStatusReport()).isNotNull();
        assertThat(second.mac()).isEqualTo(new MachineMdmStatus.MacView(true, false, true, false, null));

        MachineMdmStatus third = statuses.get(2);
        assertThat(third.server()).as("no enrollment id: the server is not asked").isNull();
        assertThat(third.failed()).isFalse();
        assertThat(third.mac().enrolled()).isFalse();
        assertThat(MdmCommand.Status.line(third)).contains("studio-03", "(no enrollment id)", "not asked", "Mac: NOT enrolled");
        assertThat(MdmCommand.Status.line(second)).contains("status reports received", "bootstrap token not-exposed-by-server",
                "Mac: enrolled, bootstrap token NOT escrowed");
    }

    @Test
    void aRefusedKeyAServerErrorAndGarbageAreErrorsNamingTheServerAndTheRequest() {
        String server = "nanohub " + hub.url().toString().replaceFirst("/$", "");
        List<MachineMdmStatus> refused = service.status(machines(), server(wrongKey), settings);
        assertThat(refused.subList(0, 2)).allSatisfy(status -> {
            assertThat(status.failed()).isTrue();
            assertThat(status.server().error()).startsWith(server + ": GET /api/v1/ddm/status-report/" + status.enrollmentId()).contains("401");
            assertThat(status.mac().error()).as("the Mac is still asked").isNull();
        });

        hub.setFault(SimulatedNanoHub.ServerFault.INTERNAL_ERROR);
        assertThat(service.status(machines(), server(apiKey), settings).getFirst().server().error())
                .startsWith(server + ": GET /api/v1/ddm/status-report/").contains("500").contains("simulated storage failure");

        hub.setFault(SimulatedNanoHub.ServerFault.GARBAGE);
        assertThat(service.status(machines(), server(apiKey), settings).getFirst().server().error())
                .startsWith(server + ": GET /api/v1/ddm/status-report/");

        List<MachineMdmStatus> noKey = service.status(machines(), new MdmServer(hub.url().toString(), null), settings);
        assertThat(noKey.getFirst().server().error()).isEqualTo("MDM server " + hub.url() + ": the inventory's mdm: section (" + hub.url()
                + ") has no apiToken (a secret reference such as env:MACFLEET_NANOHUB_API_KEY)");
    }

    @Test
    void aMacThatIsOffIsAnErrorNamingIt() {
        fleet.powerOff("studio-03");
        try {
            MachineMdmStatus third = service.status(List.of(machine("studio-03", false)), server(apiKey), settings).getFirst();
            assertThat(third.failed()).isTrue();
            assertThat(third.mac().error()).contains("studio-03");
        } finally {
            fleet.powerOn("studio-03");
        }
    }

    private static boolean sleep() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }
}
