package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.cabling.PortPlan;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The simulator's own full-mesh cabling: a real full mesh, and the cabling the product's plan proposes for the same Macs. */
class MeshCablingTest {

    @Test
    void everyPairIsJoinedOnceOnTheSamePortNumberAndNoPortIsUsedTwice() {
        for (int count = 2; count <= 6; count++) {
            List<String> names = names(count);
            List<Cable> cables = MeshCabling.fullMesh(names);
            assertThat(cables).hasSize(count * (count - 1) / 2);
            Set<PortRef> used = new HashSet<>();
            Set<String> pairs = new HashSet<>();
            for (Cable cable : cables) {
                assertThat(cable.a().port()).isEqualTo(cable.b().port()).isBetween(2, 6);
                assertThat(used.add(cable.a())).isTrue();
                assertThat(used.add(cable.b())).isTrue();
                assertThat(pairs.add(cable.a().machine() + "-" + cable.b().machine())).isTrue();
            }
        }
    }

    @Test
    void theProductsPortPlanProposesTheSameCables() {
        // A cross-check of two independent writings (the simulator must not call the product's plan itself).
        for (int count = 2; count <= 6; count++) {
            List<String> names = names(count);
            List<String> simulated = MeshCabling.fullMesh(names).stream().map(cable -> cable.a() + " " + cable.b()).toList();
            List<String> planned = PortPlan.fullMesh("c", names).cables().stream().map(link -> link.first() + " " + link.second()).toList();
            assertThat(simulated).as(count + " Macs").isEqualTo(planned);
        }
    }

    @Test
    void sevenMacsCannotFormAFullMesh() {
        assertThatThrownBy(() -> MeshCabling.fullMesh(names(7))).hasMessageContaining("at most 6 Macs");
    }

    private static List<String> names(int count) {
        List<String> names = new ArrayList<>();
        for (int index = 1; index <= count; index++) {
            names.add("studio-0" + index);
        }
        return names;
    }
}
