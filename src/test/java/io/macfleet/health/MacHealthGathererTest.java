package io.macfleet.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.Machine;
import io.macfleet.reach.MachineReach;
import io.macfleet.simulator.FaultStep;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshRun;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One health look at simulated Macs over SSH: every source read on a sound Mac; the faults show in the figures; an
 * unreadable source (garbled output) costs only its own figures and says why.
 */
class MacHealthGathererTest {

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(directory, 3, "127.0.30.21");
        simulation.apply(List.of(), Map.of());
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    private static Map<String, MacHealth> look() {
        List<io.macfleet.ssh.SshTarget> targets = new ArrayList<>();
        for (Machine machine : simulation.desiredState.machines(null)) {
            targets.add(MachineReach.of(machine).ssh());
        }
        try (SshRun run = simulation.facts.openRun(SimulatedInventory.settings(Duration.ofSeconds(10)), simulation.facts.auditLog())) {
            Map<String, MacHealth> looks = new java.util.TreeMap<>();
            for (MachineResult<MacHealth> result : run.onFleet(targets, new MacHealthGatherer(Clock.systemUTC())::gather)) {
                assertThat(result.error()).as(result.machine()).isNull();
                looks.put(result.machine(), result.value());
            }
            return looks;
        }
    }

    @Test
    void faultsShowInTheFiguresAndAGarbledSourceCostsOnlyItself() {
        Map<String, MacHealth> sound = look();
        MacHealth first = sound.get("studio-01");
        assertThat(first.unreadable()).isEmpty();
        assertThat(first.packagePowerWatts().getAsDouble()).isBetween(30.0, 50.0);
        assertThat(first.thermalPressure()).contains("Nominal");
        assertThat(first.cpuTemperatureCelsius()).isEmpty(); // Apple silicon: no smc sampler
        assertThat(first.memoryPressureRatio().getAsDouble()).isBetween(0.0, 0.5);
        assertThat(first.wiredMemoryBytes().getAsLong()).isPositive();
        assertThat((double) first.wiredMemoryBytes().getAsLong() / first.wiredLimitBytes().getAsLong()).isLessThan(0.5);
        assertThat(first.panicReports()).contains(List.of()); // no DiagnosticReports folder yet: no reports, not unreadable
        assertThat(first.bootTime()).isPresent();

        simulation.fleet.inject(FaultStep.machine("studio-02", "overheat"));
        simulation.fleet.inject(FaultStep.machine("studio-02", "wired-memory-high"));
        simulation.fleet.inject(FaultStep.machine("studio-02", "kernel-panic"));
        simulation.fleet.machine("studio-03").faults().garbleProgram("memory_pressure");
        try {
            Map<String, MacHealth> faulted = look();
            MacHealth hot = faulted.get("studio-02");
            assertThat(hot.thermalPressure()).contains("Heavy");
            assertThat(hot.thermalPressureLevel()).hasValue(2);
            assertThat(hot.packagePowerWatts().getAsDouble()).isGreaterThan(180);
            assertThat((double) hot.wiredMemoryBytes().getAsLong() / hot.wiredLimitBytes().getAsLong()).isGreaterThan(0.9);
            assertThat(hot.panicReports().orElseThrow()).singleElement().asString().matches("panic-full-.*\\.panic");

            MacHealth garbled = faulted.get("studio-03");
            assertThat(garbled.unreadable()).containsOnlyKeys("memory_pressure");
            assertThat(garbled.unreadable().get("memory_pressure")).startsWith("memory_pressure: expected 'The system has N");
            assertThat(garbled.memoryPressureRatio()).isEmpty();
            assertThat(garbled.wiredMemoryBytes()).isEmpty();
            assertThat(garbled.packagePowerWatts()).isPresent();
            assertThat(garbled.bootTime()).isPresent();
        } finally {
            simulation.heal();
        }
    }
}
