package io.macfleet.cabling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.inventory.PortReference;
import io.macfleet.inventory.Topology;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PortPlanTest {

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 5, 6})
    void everyPairGetsOneCableOnTheSamePortNumberAtBothEnds(int count) {
        List<String> machines = new ArrayList<>();
        for (int index = 1; index <= count; index++) {
            machines.add("studio-0" + index);
        }

        PortPlan plan = PortPlan.fullMesh("llm-a", machines);

        assertThat(plan.cables()).hasSize(count * (count - 1) / 2);
        Set<String> pairs = new HashSet<>();
        Set<PortReference> usedPorts = new HashSet<>();
        for (Topology.Link cable : plan.cables()) {
            assertThat(pairs.add(cable.first().machine() + "|" + cable.second().machine())).as("pair cabled twice: " + cable).isTrue();
            assertThat(usedPorts.add(cable.first())).as("port used twice: " + cable.first()).isTrue();
            assertThat(usedPorts.add(cable.second())).as("port used twice: " + cable.second()).isTrue();
            assertThat(cable.first().port()).isEqualTo(cable.second().port()).isBetween(2, 6);
        }
    }

    @Test
    void sevenMachinesCannotBeFullyMeshedOverRdma() {
        assertThatThrownBy(() -> PortPlan.fullMesh("big", List.of("a", "b", "c", "d", "e", "f", "g")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a full mesh of 7 machines needs 6 RDMA-capable ports on each machine; a Mac Studio has 5, so a full RDMA mesh has at most 6 machines");
    }

    @Test
    void cablingSheetListsEveryCable() {
        String sheet = PortPlan.fullMesh("llm-a", List.of("studio-01", "studio-02")).toText();

        assertThat(sheet).contains("Cabling sheet for cluster llm-a: 2 machines, full mesh, 1 Thunderbolt 5 cables")
                .contains("Leave port 1 (next to the Ethernet port) free")
                .contains("  1  studio-01 port 2");
    }
}
