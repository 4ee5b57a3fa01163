package io.macfleet.inventory;

import java.util.List;
import java.util.Map;

/**
 * One Mac Studio with defaults, groups and its own entry merged (most specific wins).
 *
 * @param cluster the cluster's name, or null for a machine in no cluster
 * @param groups the groups the machine's settings came from, in merge order
 * @param serialNumber null when not given; likewise model, memoryGb, mdmEnrollmentId, volumeOwner
 */
public record Machine(String name, String address, SshSettings ssh, String serialNumber, String model,
                      Integer memoryGb, Role role, String cluster, List<String> groups, String mdmEnrollmentId,
                      VolumeOwner volumeOwner, Map<String, String> labels) {

    public Machine {
        groups = List.copyOf(groups);
        labels = Map.copyOf(labels);
    }

    public enum Role {
        COORDINATOR, WORKER;

        public String yamlName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
