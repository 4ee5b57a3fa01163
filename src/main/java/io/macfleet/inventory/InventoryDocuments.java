package io.macfleet.inventory;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The stored form of clusters and machines: ordered JSON-ready maps (null fields left out), and their
 * flattening into dotted field names that the plan compares.
 */
public final class InventoryDocuments {

    private InventoryDocuments() {
    }

    public static Map<String, Object> of(Cluster cluster) {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("name", cluster.name());
        document.put("macosVersion", cluster.macosVersion());
        Map<String, Object> topology = new LinkedHashMap<>();
        topology.put("kind", cluster.topology().kind().yamlName());
        topology.put("links", cluster.topology().links().stream().map(Topology.Link::toString).toList());
        document.put("topology", topology);
        Map<String, Object> inference = new LinkedHashMap<>();
        putIfPresent(inference, "model", cluster.inference().model());
        inference.put("parallelism", cluster.inference().parallelism().yamlName());
        inference.put("port", cluster.inference().port());
        document.put("inference", inference);
        return document;
    }

    public static Map<String, Object> of(Machine machine) {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("name", machine.name());
        document.put("address", machine.address());
        putIfPresent(document, "cluster", machine.cluster());
        document.put("role", machine.role().yamlName());
        document.put("groups", machine.groups());
        putIfPresent(document, "serialNumber", machine.serialNumber());
        putIfPresent(document, "model", machine.model());
        putIfPresent(document, "memoryGb", machine.memoryGb());
        Map<String, Object> ssh = new LinkedHashMap<>();
        ssh.put("user", machine.ssh().user());
        ssh.put("port", machine.ssh().port());
        putIfPresent(ssh, "privateKey", machine.ssh().privateKey() == null ? null : machine.ssh().privateKey().toString());
        putIfPresent(ssh, "passphrase", machine.ssh().passphrase() == null ? null : machine.ssh().passphrase().toString());
        putIfPresent(ssh, "hostKey", machine.ssh().hostKey());
        document.put("ssh", ssh);
        if (machine.mdmEnrollmentId() != null) {
            document.put("mdm", Map.of("enrollmentId", machine.mdmEnrollmentId()));
        }
        if (machine.volumeOwner() != null) {
            Map<String, Object> volumeOwner = new LinkedHashMap<>();
            putIfPresent(volumeOwner, "user", machine.volumeOwner().user());
            putIfPresent(volumeOwner, "password", machine.volumeOwner().password() == null ? null : machine.volumeOwner().password().toString());
            document.put("volumeOwner", volumeOwner);
        }
        document.put("labels", new TreeMap<>(machine.labels()));
        return document;
    }

    private static void putIfPresent(Map<String, Object> document, String key, Object value) {
        if (value != null) {
            document.put(key, value);
        }
    }

    /** Dotted field names to text values; lists become one field ("[a, b]"), empty maps vanish. */
    public static Map<String, String> flatten(Map<String, ?> document) {
        Map<String, String> fields = new TreeMap<>();
        flatten("", document, fields);
        return fields;
    }

    private static void flatten(String prefix, Map<String, ?> document, Map<String, String> fields) {
        document.forEach((key, value) -> {
            String name = prefix.isEmpty() ? key : prefix + "." + key;
            if (value instanceof Map<?, ?> map) {
                @SuppressWarnings("unchecked")
                Map<String, ?> child = (Map<String, ?>) map;
                flatten(name, child, fields);
            } else if (value instanceof List<?> list) {
                if (!list.isEmpty()) {
                    fields.put(name, list.toString());
                }
            } else if (value != null) {
                fields.put(name, String.valueOf(value));
            }
        });
    }
}
