package io.macfleet.cabling;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Cabling facts for runtime tests in other packages (ClusterFixture stays package-private). */
public final class RuntimeCablingFixtures {

    private RuntimeCablingFixtures() {
    }

    /** A full mesh in the proposed port plan, RDMA on everywhere. */
    public static ClusterCabling.Cluster fullMesh(String cluster, String... names) {
        ClusterFixture fixture = ClusterFixture.fullMesh(names);
        return new ClusterCabling.Cluster(PlannedTopology.fullMesh(cluster, fixture.names()), fixture.facts(), Optional.empty());
    }

    /** A full mesh with RDMA off on one Mac (the check fails for JACCL). */
    public static ClusterCabling.Cluster fullMeshRdmaOff(String cluster, String machine, String... names) {
        ClusterFixture fixture = ClusterFixture.fullMesh(names).rdma(machine, false);
        return new ClusterCabling.Cluster(PlannedTopology.fullMesh(cluster, fixture.names()), fixture.facts(), Optional.empty());
    }

    /** One cable from each Mac's port 2 to the next Mac's port 3 and from the last to the first, planned as a full mesh (so the check fails). */
    public static ClusterCabling.Cluster ring(String cluster, String... names) {
        ClusterFixture fixture = ClusterFixture.macStudios(names);
        for (int index = 0; index < names.length; index++) {
            fixture.cable(names[index], 2, names[(index + 1) % names.length], 3);
        }
        return new ClusterCabling.Cluster(PlannedTopology.fullMesh(cluster, fixture.names()), fixture.facts(), Optional.empty());
    }

    /** These facts, with {@code device} missing from {@code machine}'s ibv_devices. */
    public static ClusterCabling.Cluster withoutDevice(ClusterCabling.Cluster cluster, String machine, String device) {
        List<MachineCablingFacts> facts = new ArrayList<>();
        for (MachineCablingFacts fact : cluster.facts()) {
            if (fact.machine().equals(machine)) {
                fact = new MachineCablingFacts(fact.machine(), fact.managementAddress(), fact.thunderbolt(), fact.hardwarePorts(), fact.rdmaEnabled(),
                        fact.rdmaDevices().map(devices -> devices.stream().filter(name -> !name.equals(device)).toList()), fact.macosVersion(),
                        fact.bridgeActive(), fact.rdmaPortStates());
            }
            facts.add(fact);
        }
        return new ClusterCabling.Cluster(cluster.plan(), facts, cluster.targetVersion());
    }
}
