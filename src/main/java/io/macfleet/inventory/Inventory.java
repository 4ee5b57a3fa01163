package io.macfleet.inventory;

import java.util.List;
import java.util.Optional;

/**
 * The resolved desired state: ranges expanded, defaults and groups merged into each machine, every
 * reference checked. Produced only by {@link InventoryLoader} from an inventory without errors.
 *
 * @param mdm the MDM server, or null when the inventory names none
 */
public record Inventory(List<Cluster> clusters, List<Machine> machines, MdmServer mdm) {

    public Inventory {
        clusters = List.copyOf(clusters);
        machines = List.copyOf(machines);
    }

    public Optional<Cluster> cluster(String name) {
        return clusters.stream().filter(cluster -> cluster.name().equals(name)).findFirst();
    }

    public Optional<Machine> machine(String name) {
        return machines.stream().filter(machine -> machine.name().equals(name)).findFirst();
    }

    /** The machines of a cluster in name order. */
    public List<Machine> machinesOf(String clusterName) {
        return machines.stream().filter(machine -> clusterName.equals(machine.cluster())).toList();
    }
}
