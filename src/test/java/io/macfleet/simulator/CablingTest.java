package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fleet-level cabling model, without SSH. */
class CablingTest {

    @Test
    void meshRingAndPortRules(@TempDir Path state) {
        SimulatedFleet.Builder builder = SimulatedFleet.builder(state);
        for (int i = 1; i <= 9; i++) {
            builder.macStudio("mac-" + i, 256, "26.2");
        }
        SimulatedFleet nine = builder.build();
        assertThatThrownBy(nine::cableFullMesh).hasMessageContaining("full mesh of 9 Macs");
        assertThat(nine.cableRing()).hasSize(9).contains("mac-9:2 <-> mac-1:3");
        assertThatThrownBy(() -> nine.cabling().plug("mac-1:2", "mac-5:5", LinkSpeed.TB5)).hasMessageContaining("port already used");
        assertThatThrownBy(() -> PortRef.parse("mac-1:7")).hasMessageContaining("Thunderbolt port 7 of mac-1 does not exist");
        assertThatThrownBy(() -> PortRef.parse("mac-1")).hasMessageContaining("expected machine:port");
        assertThatThrownBy(() -> nine.cabling().plug("mac-1:3", "mac-1:4", LinkSpeed.TB5)).hasMessageContaining("loops back");

        SimulatedFleet four = SimulatedFleet.builder(state.resolve("four")).macStudio("a", 512, "26.1").macStudio("b", 512, "26.1")
                .macStudio("c", 256, "26.1").macStudio("d", 256, "26.1").build();
        assertThat(four.cableFullMesh()).containsExactly("a:2 <-> d:2", "a:3 <-> b:3", "a:4 <-> c:4", "b:2 <-> c:2", "b:4 <-> d:4", "c:3 <-> d:3");
        Cable moved = four.cabling().move(PortRef.parse("a:3"), PortRef.parse("a:6"));
        assertThat(moved).isEqualTo(new Cable(PortRef.parse("a:6"), PortRef.parse("b:3"), LinkSpeed.TB5));
        assertThat(four.cabling().at(PortRef.parse("a:3"))).isEmpty();
        assertThatThrownBy(() -> MacSpec.macStudioM3Ultra("x", 128)).hasMessageContaining("must be 96, 256 or 512 GB");
        assertThatThrownBy(() -> MacosRelease.of("25.0")).hasMessageContaining("unknown macOS version '25.0'");
    }
}
