package io.macfleet.mdm.status;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.command.ExitCodes;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.mdm.SimulatedMacHost;
import io.macfleet.simulator.mdm.SimulatedNanoHub;
import io.macfleet.simulator.mdm.UpdateTimings;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** `macfleet mdm status` end to end: the applied inventory's mdm: section, the simulated NanoHUB and Macs, exit codes. */
@QuarkusMainTest
class MdmStatusCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static SimulatedInventory simulation;
    static SimulatedNanoHub hub;
    static Path inventory;
    static Path inventoryWithWrongKey;

    @BeforeAll
    static void start() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-mdm-status-cli");
        simulation = SimulatedInventory.start(directory, 2, "127.0.0.161");
        hub = new SimulatedNanoHub("127.0.0.1", 0, "cli-key", UpdateTimings.forTests());
        for (SimulatedMac mac : simulation.fleet.machines()) {
            mac.setMdmEnrolled(true);
            hub.enroll(mac.spec().hardwareUuid(), new SimulatedMacHost(simulation.fleet, mac));
        }
        simulation.fleet.machine("studio-01").setBootstrapTokenEscrowed(true);
        Path key = directory.resolve("nanohub-key");
        Files.writeString(key, "cli-key\n");
        Path wrong = directory.resolve("wrong-key");
        Files.writeString(wrong, "nope\n");
        inventory = withMdm(simulation.writeInventory(List.of(), Map.of()), key);
        inventoryWithWrongKey = withMdm(simulation.writeInventory(List.of(), Map.of()), wrong);
    }

    /** Adds the mdm: section and each machine's enrollment id (its hardware UUID, as the simulated server knows it). */
    static Path withMdm(Path directory, Path key) throws Exception {
        Path file = directory.resolve("macfleet.yaml");
        String yaml = Files.readString(file);
        for (SimulatedMac mac : simulation.fleet.machines()) {
            String serial = "    serialNumber: " + mac.spec().serialNumber() + "\n";
            yaml = yaml.replace(serial, serial + "    mdm:\n      enrollmentId: \"" + mac.spec().hardwareUuid() + "\"\n");
        }
        Files.writeString(file, "mdm:\n  url: \"" + hub.url() + "\"\n  apiToken: \"file:" + key + "\"\n" + yaml);
        return directory;
    }

    @AfterAll
    static void stop() {
        hub.close();
        simulation.close();
    }


    @Test
    void statusThenAServerThatRefusesTheKeyOrFails(QuarkusMainLauncher launcher) throws Exception {
        LaunchResult applied = launcher.launch("inventory", "apply", inventory.toString());
        assertThat(applied.exitCode()).as(applied.getErrorOutput()).isZero();

        LaunchResult text = launcher.launch("mdm", "status", "--accept-new-host-keys");
        assertThat(text.exitCode()).as(text.getErrorOutput()).isEqualTo(ExitCodes.OK);
        assertThat(output(text)).contains("MDM server: " + hub.url(), "studio-01", simulation.fleet.machine("studio-01").spec().hardwareUuid(),
                "bootstrap token not-exposed-by-server", "Mac: enrolled, bootstrap token escrowed", "Mac: enrolled, bootstrap token NOT escrowed");

        LaunchResult json = launcher.launch("mdm", "status", "studio-02", "--json");
        assertThat(json.exitCode()).isEqualTo(ExitCodes.OK);
        JsonNode machines = JSON.readTree(output(json)).get("machines");
        assertThat(machines).hasSize(1);
        assertThat(machines.get(0).get("machine").asText()).isEqualTo("studio-02");
        assertThat(machines.get(0).get("mac").get("bootstrapTokenEscrowed").asBoolean()).isFalse();

        assertThat(launcher.launch("mdm", "status", "studio-99").exitCode()).isEqualTo(ExitCodes.USAGE);

        // A Mac of the cluster that is not enrolled (what `demo reset` used to leave) is a failed check, named.
        simulation.fleet.machine("studio-02").setMdmEnrolled(false);
        LaunchResult unenrolled = launcher.launch("mdm", "status");
        simulation.fleet.machine("studio-02").setMdmEnrolled(true);
        assertThat(unenrolled.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(output(unenrolled)).contains("Mac: NOT enrolled");
        assertThat(unenrolled.getErrorOutput()).contains("macfleet mdm status: studio-02: not enrolled (the Mac reports no MDM enrollment)")
                .doesNotContain("studio-01: not enrolled");

        hub.setFault(SimulatedNanoHub.ServerFault.INTERNAL_ERROR);
        LaunchResult failing = launcher.launch("mdm", "status");
        hub.setFault(SimulatedNanoHub.ServerFault.NONE);
        assertThat(failing.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(failing.getErrorOutput()).contains("macfleet mdm status: studio-01: nanohub " + hub.url().toString().replaceFirst("/$", ""))
                .contains("500").contains("simulated storage failure");

        assertThat(launcher.launch("inventory", "apply", inventoryWithWrongKey.toString()).exitCode()).isZero();
        LaunchResult refused = launcher.launch("mdm", "status");
        assertThat(refused.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(refused.getErrorOutput()).contains("macfleet mdm status: studio-02: nanohub ").contains("401");
    }
}
