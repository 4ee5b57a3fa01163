package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The registry of fault kinds: every kind is listed and applies, unknown ones are refused, a new kind is one class. */
class FaultKindsTest {

    /** The names scenario files, the control API, `macfleet demo fault` and the tests use: they must not change. */
    static final List<String> NAMES = List.of("hang", "hang-connect", "slow", "drop-connection", "garbage", "reboot-never-returns",
            "disk-full", "crash-loop", "daemon-crash", "wedge-rdma", "host-key-change", "reboot", "power-off", "power-on", "recovery", "clear",
            "unplug", "plug", "tb4", "tb5", "one-sided", "rdma-down", "move", "overheat", "kernel-panic", "wired-memory-high");

    @TempDir
    Path state;

    /** A kind a test adds without touching the simulator: one class, one registration. */
    static final class Freeze implements FaultKind {
        @Override
        public String name() {
            return "freeze";
        }

        @Override
        public Target target() {
            return Target.MACHINE;
        }

        @Override
        public String apply(Injection injection) {
            injection.faults().setSlowMillis(60_000);
            return "froze " + injection.mac().name();
        }
    }

    private SimulatedFleet fleet(FaultKind... extra) {
        SimulatedFleet.Builder builder = SimulatedFleet.builder(state).baseAddress("127.0.13.11").basePort(0).rebootDuration(Duration.ofMillis(300))
                .macStudio("studio-01", 512, "26.2").macStudio("studio-02", 512, "26.2").macStudio("studio-03", 256, "26.2");
        for (FaultKind kind : extra) {
            builder.fault(kind);
        }
        return builder.build().start();
    }

    @Test
    void everyStandardKindIsListedOnceByTheNameItHadAndApplies() {
        assertThat(FaultKinds.standard().names()).isEqualTo(NAMES);
        assertThat(SimulatedFleet.FAULT_KINDS).isEqualTo(NAMES);
        assertThat(FaultKinds.standard().names(FaultKind.Target.CABLE)).containsExactly("unplug", "plug", "tb4", "tb5", "one-sided", "rdma-down",
                "move", "clear");
        try (SimulatedFleet fleet = fleet()) {
            List<String> applied = new ArrayList<>();
            for (FaultKind kind : fleet.faultKinds().all()) {
                String said;
                if (kind.target() == FaultKind.Target.CABLE) {
                    // Each cable fault on a cable of its own, plugged fresh (unplug and move take it away; plug plugs its own).
                    if (!kind.name().equals("plug")) {
                        fleet.cabling().plug("studio-01:1", "studio-02:1", LinkSpeed.TB5);
                    }
                    said = fleet.inject(new FaultStep(null, "studio-01:1", kind.name(), null, null, kind.name().equals("move") ? "studio-01:4" : null,
                            kind.name().equals("plug") ? "studio-03:2" : null));
                    fleet.cabling().unplug(PortRef.parse("studio-01:1"));
                    fleet.cabling().unplug(PortRef.parse("studio-01:4"));
                    fleet.cabling().unplug(PortRef.parse("studio-03:2"));
                } else {
                    said = fleet.inject(new FaultStep("studio-02", null, kind.name(), 10L, "io.macfleet.test-daemon", null, null));
                    fleet.powerOn("studio-02");
                    fleet.inject(FaultStep.machine("studio-02", "clear"));
                }
                assertThat(said).as(kind.name()).isNotBlank();
                applied.add(kind.name());
            }
            assertThat(applied).containsAll(NAMES);
        }
    }

    @Test
    void aMachineFaultChangesTheMacsFaultsAndClearUndoesIt() {
        try (SimulatedFleet fleet = fleet()) {
            assertThat(fleet.inject(new FaultStep("studio-03", null, "slow", 250L, null, null, null))).isEqualTo("slow on studio-03");
            assertThat(fleet.inject(FaultStep.machine("studio-02", "disk-full"))).isEqualTo("disk-full on studio-02");
            assertThat(fleet.machine("studio-03").faults().slowMillis()).isEqualTo(250);
            assertThat(fleet.machine("studio-02").faults().diskFull()).isTrue();
            assertThat(fleet.machine("studio-01").faults().diskFull()).as("each Mac has its own faults").isFalse();
            fleet.inject(FaultStep.machine("studio-02", "clear"));
            assertThat(fleet.machine("studio-02").faults().describe()).isEqualTo(new Faults().describe());
        }
    }

    @Test
    void anUnknownKindIsRefusedNamingTheKnownOnes() {
        try (SimulatedFleet fleet = fleet()) {
            assertThatThrownBy(() -> fleet.inject(FaultStep.machine("studio-02", "melt")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("unknown fault 'melt' for studio-02; known: " + NAMES);
            assertThatThrownBy(() -> fleet.inject(FaultStep.cable("studio-01:1", "hang")))
                    .hasMessage("'hang' is not a cable fault (unplug, plug, tb4, tb5, one-sided, rdma-down, move, clear)");
            assertThatThrownBy(() -> fleet.inject(FaultStep.machine("studio-02", " ")))
                    .hasMessageStartingWith("a fault step needs 'fault' (one of [hang, hang-connect,");
            assertThatThrownBy(() -> fleet.inject(FaultStep.machine("studio-02", "crash-loop")))
                    .hasMessage("fault 'crash-loop' needs 'daemon' (a launch daemon label)");
        }
    }

    @Test
    void aNewKindIsOneClassAndOneRegistrationAndANameTakenTwiceIsRefused() {
        try (SimulatedFleet fleet = fleet(new Freeze())) {
            assertThat(fleet.faultKinds().names()).endsWith("freeze");
            assertThat(fleet.inject(FaultStep.machine("studio-01", "freeze"))).isEqualTo("froze studio-01");
            assertThat(fleet.machine("studio-01").faults().slowMillis()).isEqualTo(60_000);
        }
        assertThatThrownBy(() -> FaultKinds.standard().with(new MachineFaultKinds.Hang()))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("two machine fault kinds are named 'hang'");
    }
}
