package io.macfleet.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.deployment.NodeDeployer;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.ssh.SshSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MLX runtime's lockstep upgrade (issue 26, item 3: "lockstep upgrade with drain, as for the other runtimes") on
 * three simulated Macs (base address 127.0.103.11): new mlx and mlx-lm versions in the inventory give a new venv on
 * every Mac (one per version pair, so the old one stays for a rollback), read back on each, then the ranks are drained
 * and started again on it and the cluster serves; a second run has nothing to do.
 */
class MlxUpgradeOnSimulatorTest {

    static final List<String> NAMES = List.of("studio-01", "studio-02", "studio-03");

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;
    static RuntimeService runtimes;
    static SshSettings settings;
    static Path inventory;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(directory, 3, "127.0.103.11");
        simulation.cableFullMesh(NAMES);
        simulation.fleet.assignThunderboltLoopbackAddresses();
        Path model = SimulatedRuntimes.mlxModel(directory);
        inventory = SimulatedRuntimes.mlxInventory(simulation, NAMES, SimulatedRuntimes.freePort(), model, "0.29.3", "0.28.2", "");
        settings = SimulatedInventory.settings(Duration.ofSeconds(60));
        runtimes = SimulatedRuntimes.serviceFor(simulation, inventory, settings);
        RuntimeDeployer.Outcome deployed = runtimes.deploy("llm-a", Optional.empty(), settings, NodeDeployer.Listener.NONE);
        assertThat(deployed.switched()).isTrue();
        assertThat(MlxOnSimulatorTest.chat(deployed.endpoint())).contains("\"choices\"");
    }

    @AfterAll
    static void stop() {
        if (simulation != null) {
            simulation.close();
        }
    }

    @Test
    void newVersionsGoToEveryMacDrainedAndTheClusterServesOnThem() throws Exception {
        Path yaml = inventory.resolve("macfleet.yaml");
        Files.writeString(yaml, Files.readString(yaml).replace("mlxVersion: \"0.29.3\"", "mlxVersion: \"0.29.4\"")
                .replace("mlxLmVersion: \"0.28.2\"", "mlxLmVersion: \"0.28.3\""));
        LoadResult loaded = InventoryLoader.load(inventory);
        assertThat(loaded.errors()).isEmpty();
        simulation.desiredState.apply(loaded.inventory(), "test", inventory.toString());

        RuntimeUpgrade.Preview preview = runtimes.upgradePreview("llm-a", settings);
        assertThat(preview.changes()).isTrue();
        assertThat(preview.machines()).extracting(RuntimeUpgrade.MachineChange::machine).containsExactlyElementsOf(NAMES);
        assertThat(preview.machines()).allSatisfy(machine -> {
            assertThat(machine.from()).isEqualTo("mlx 0.29.3, mlx-lm 0.28.2");
            assertThat(machine.to()).isEqualTo("mlx 0.29.4, mlx-lm 0.28.3");
        });

        List<String> steps = new CopyOnWriteArrayList<>();
        long started = System.nanoTime();
        RuntimeUpgrade.Outcome outcome = runtimes.upgrade("llm-a", settings, new NodeDeployer.Listener() {
            @Override
            public void step(String machine, String what) {
                steps.add(machine + " " + what);
            }
        });
        System.out.printf("lockstep upgrade of MLX on 3 simulated Macs (0.29.3/0.28.2 -> 0.29.4/0.28.3): %.1f s; steps %s%n",
                (System.nanoTime() - started) / 1e9, steps);
        assertThat(outcome.upgraded()).as(outcome.summary()).isTrue();
        assertThat(outcome.summary()).contains("mlx 0.29.4, mlx-lm 0.28.3");
        // Every Mac drained and started again on the new venv.
        assertThat(steps).anySatisfy(step -> assertThat(step).contains("draining"));
        assertThat(MlxOnSimulatorTest.chat(outcome.endpoint())).contains("\"choices\"");
        RuntimeUpgrade.Preview after = runtimes.upgradePreview("llm-a", settings);
        assertThat(after.changes()).isFalse();
        assertThat(after.machines()).allSatisfy(machine -> assertThat(machine.from()).isEqualTo("mlx 0.29.4, mlx-lm 0.28.3"));
        // One venv per version pair: the old one is still on each Mac for a rollback.
        for (String mac : NAMES) {
            assertThat(simulation.fleet.machine(mac).launchd().pid(MlxRuntime.LABEL)).as(mac).isPresent();
            assertThat(simulation.fleet.machine(mac).resolve("/usr/local/macfleet/mlx/venv-mlx-0.29.3-mlx-lm-0.28.2")).as(mac).isDirectory();
            assertThat(simulation.fleet.machine(mac).resolve("/usr/local/macfleet/mlx/venv-mlx-0.29.4-mlx-lm-0.28.3")).as(mac).isDirectory();
        }
        assertThat(runtimes.upgrade("llm-a", settings, NodeDeployer.Listener.NONE).summary()).startsWith("nothing to upgrade");
    }
}
