package io.macfleet.runtime;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.ExitCodes;
import io.macfleet.facts.SimulatedInventory;
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

/** `macfleet node upgrade`'s refusals from the command line: exit 2 and a message saying what to do, nothing touched. */
@QuarkusMainTest
class RuntimeUpgradeCliTest {

    static SimulatedInventory simulation;
    static Path inventory;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-upgrade-cli"), 2, "127.0.151.11");
        inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-u", List.of("studio-01", "studio-02"))), Map.of());
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @Test
    void theBundledNodeAndUnknownClustersAreRefusedWithExitTwo(QuarkusMainLauncher launcher) {
        assertThat(launcher.launch("inventory", "apply", inventory.toString()).exitCode()).isZero();
        LaunchResult bundled = launcher.launch("node", "upgrade", "llm-u", "--dry-run");
        assertThat(bundled.exitCode()).as(output(bundled)).isEqualTo(ExitCodes.USAGE);
        assertThat(bundled.getErrorOutput()).contains("macfleet node upgrade: cluster llm-u runs the bundled node: its upgrade is macfleet node deploy llm-u");
        LaunchResult unknown = launcher.launch("node", "upgrade", "llm-nope");
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.getErrorOutput()).contains("no cluster named 'llm-nope'");
        LaunchResult help = launcher.launch("node", "upgrade", "--help");
        assertThat(output(help)).contains("--dry-run", "roll back to the previous build");
        assertThat(simulation.fleet.machine("studio-01").launchd().labels()).as("nothing deployed").isEmpty();
    }
}
