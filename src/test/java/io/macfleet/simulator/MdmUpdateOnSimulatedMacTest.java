package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.mdm.DeclarativeOsUpdates;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.mdm.SoftwareUpdateStatus;
import io.macfleet.mdm.nanohub.NanoHubClient;
import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.mdm.SimulatedMacHost;
import io.macfleet.simulator.mdm.SimulatedNanoHub;
import io.macfleet.simulator.mdm.UpdateTimings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MDM client of a simulated Mac with a real SSH server: an enforcement through the simulated NanoHUB restarts the
 * Mac through the fleet and sw_vers over SSH then prints the new version and build; without an escrowed bootstrap
 * token (what profiles shows over SSH) it cannot install.
 */
class MdmUpdateOnSimulatedMacTest {
    @TempDir
    Path state;

    @Test
    void anEnforcementReachesSwVersOverSshAndAMissingBootstrapTokenStopsIt() throws Exception {
        TestSupport.quietSshLogs();
        KeyPair key = SshKeys.generate();
        try (SimulatedFleet fleet = SimulatedFleet.builder(state.resolve("fleet")).authorizedKey(key.getPublic()).rebootDuration(Duration.ofMillis(300))
                .macStudio("studio-01", 512, "26.1").macStudio("studio-02", 512, "26.1").build().start();
             SimulatedNanoHub hub = new SimulatedNanoHub("127.0.0.1", 0, "k", UpdateTimings.forTests())) {
            for (SimulatedMac mac : fleet.machines()) {
                mac.setMdmEnrolled(true);
                hub.enroll(mac.spec().hardwareUuid(), new SimulatedMacHost(fleet, mac));
            }
            fleet.machine("studio-01").setBootstrapTokenEscrowed(true);
            Path keyFile = state.resolve("key");
            Files.writeString(keyFile, "k");
            NanoHubClient client = new NanoHubClient(hub.url(), SecretReference.of("file:" + keyFile), Duration.ofSeconds(3));
            String first = fleet.machine("studio-01").spec().hardwareUuid();
            String second = fleet.machine("studio-02").spec().hardwareUuid();

            new DeclarativeOsUpdates(client).enforce("studios", new OsUpdateTarget("26.2", Optional.of("25C56"), LocalDateTime.now()), List.of(first, second));

            assertThat(TestSupport.await(Duration.ofSeconds(15), () -> swVers("studio-01", fleet, key).equals("26.2 25C56"))).isTrue();
            assertThat(TestSupport.await(Duration.ofSeconds(10), () -> client.softwareUpdateStatus(first).buildVersion().equals(Optional.of("25C56")))).isTrue();

            assertThat(TestSupport.await(Duration.ofSeconds(10), () -> client.softwareUpdateStatus(second).installState()
                    .equals(Optional.of(SoftwareUpdateStatus.InstallState.FAILED)))).isTrue();
            assertThat(swVers("studio-02", fleet, key)).isEqualTo("26.1 25B78");
            assertThat(SshClient.exec(fleet, "studio-02", key, "profiles status -type bootstraptoken").stdout()).contains("escrowed to server: NO");
        }
    }

    private static String swVers(String machine, SimulatedFleet fleet, KeyPair key) {
        try {
            return SshClient.exec(fleet, machine, key, "sw_vers -productVersion").stdout().strip() + " "
                    + SshClient.exec(fleet, machine, key, "sw_vers -buildVersion").stdout().strip();
        } catch (IOException e) {
            return "unreachable";
        }
    }
}
