package io.macfleet.runtime;

import io.macfleet.cabling.PeerConfiguration;
import io.macfleet.inventory.InferenceSettings;
import io.macfleet.ssh.SshTarget;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a runtime plans from: the cluster's machines in rank order (the head, the inventory's coordinator, first), the
 * inventory's inference settings, the model file on this host, the bundled node's jar, and the point-to-point links
 * configured on both ends (the bundled node's cluster file names them).
 */
public record RuntimeCluster(String name, InferenceSettings inference, List<Machine> machines, Optional<Path> model,
                             Optional<Path> nodeJar, List<PeerConfiguration.PeerLink> configuredLinks,
                             Optional<io.macfleet.cabling.ClusterCabling.Cluster> cabling) {

    /** Without the cabling facts (a runtime that needs them, e.g. MLX's JACCL device matrix, refuses then). */
    public RuntimeCluster(String name, InferenceSettings inference, List<Machine> machines, Optional<Path> model,
                          Optional<Path> nodeJar, List<PeerConfiguration.PeerLink> configuredLinks) {
        this(name, inference, machines, model, nodeJar, configuredLinks, Optional.empty());
    }

    /**
     * One Mac.
     *
     * @param thunderboltAddresses for each peer joined to this Mac by a cable: this Mac's own IPv4 address on that cable
     *                             (from the cabling facts: the interface the cable is plugged into, its configured address)
     */
    public record Machine(int rank, String name, SshTarget ssh, String managementAddress, int memoryGb,
                          Map<String, String> thunderboltAddresses) {
        public Machine {
            thunderboltAddresses = Map.copyOf(thunderboltAddresses);
        }
    }

    public RuntimeCluster {
        machines = List.copyOf(machines);
        configuredLinks = List.copyOf(configuredLinks);
        if (machines.isEmpty()) {
            throw new RuntimeRefused("cluster " + name + " has no machines to deploy to");
        }
    }

    public Machine head() {
        return machines.getFirst();
    }

    /** Simulated Macs share one host: every address is a loopback one. */
    public boolean simulated() {
        return machines.stream().allMatch(machine -> machine.managementAddress().startsWith("127."));
    }

    @SuppressWarnings("unchecked")
    public <T> Optional<T> setting(String name, Class<T> type) {
        Object value = inference.settings().get(name);
        return type.isInstance(value) ? Optional.of((T) value) : Optional.empty();
    }

    public Map<String, Object> settings() {
        return inference.settings();
    }
}
