package io.macfleet.inventory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.macfleet.secrets.SecretReference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The stored form of clusters, machines and the MDM server: ordered JSON-ready maps (null fields left out), their
 * flattening into dotted field names that the plan compares, and the way back to the typed records. The maps stay
 * in this package; other packages get the records, or a JSON tree for the REST API's answers.
 */
public final class InventoryDocuments {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>> MAP = new com.fasterxml.jackson.core.type.TypeReference<>() {
    };

    private InventoryDocuments() {
    }

    static Map<String, Object> of(Cluster cluster) {
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
        // Only a non-default runtime is stored, so documents applied before runtimes existed compare unchanged.
        if (!InferenceSettings.BUNDLED.equals(cluster.inference().runtime())) {
            inference.put("runtime", cluster.inference().runtime());
        }
        if (!cluster.inference().settings().isEmpty()) {
            inference.put("settings", cluster.inference().settings());
        }
        document.put("inference", inference);
        if (cluster.supervision().rebootOnRdmaFailure()) {
            // Only a non-default policy is stored, so documents applied before the setting existed compare unchanged.
            document.put("supervision", Map.of("rdmaFailure", "reboot"));
        }
        return document;
    }

    static Map<String, Object> of(Machine machine) {
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

    static Map<String, Object> of(MdmServer mdm) {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("kind", mdm.kind());
        document.put("url", mdm.url());
        putIfPresent(document, "apiToken", mdm.apiToken() == null ? null : mdm.apiToken().toString());
        return document;
    }

    /** The REST API's form of a machine: its stored document. */
    public static JsonNode json(Machine machine) {
        return JSON.valueToTree(of(machine));
    }

    /** The REST API's form of a cluster: its stored document with the names of its machines. */
    public static JsonNode json(Cluster cluster, List<String> machineNames) {
        ObjectNode node = JSON.valueToTree(of(cluster));
        node.set("machines", JSON.valueToTree(machineNames));
        return node;
    }

    /**
     * A value of a machine's document by its dotted path ({@code ssh.user}, {@code labels.rack}), for templates;
     * null when there is none.
     */
    public static Object lookup(Machine machine, List<String> path) {
        return lookup(of(machine), path);
    }

    /** A value of a cluster's document (with {@code machines}, the names of its machines) by its dotted path. */
    public static Object lookup(Cluster cluster, List<String> machineNames, List<String> path) {
        Map<String, Object> document = of(cluster);
        document.put("machines", machineNames);
        return lookup(document, path);
    }

    private static Object lookup(Map<String, Object> document, List<String> path) {
        Object value = document;
        for (String key : path) {
            value = value instanceof Map<?, ?> map ? map.get(key) : null;
        }
        return value;
    }

    // ---- back to the records, from what apply stored (written by the methods above, so well-formed)

    static Machine machine(JsonNode document) {
        String name = document.path("name").asText();
        JsonNode ssh = document.path("ssh");
        SshSettings sshSettings = new SshSettings(ssh.path("user").asText(SshSettings.DEFAULT_USER), ssh.path("port").asInt(SshSettings.DEFAULT_PORT),
                secret(ssh.path("privateKey"), name, "ssh.privateKey"), secret(ssh.path("passphrase"), name, "ssh.passphrase"), text(ssh, "hostKey"));
        List<String> groups = new ArrayList<>();
        document.path("groups").forEach(group -> groups.add(group.asText()));
        Map<String, String> labels = new TreeMap<>();
        document.path("labels").properties().forEach(label -> labels.put(label.getKey(), label.getValue().asText()));
        JsonNode owner = document.path("volumeOwner");
        VolumeOwner volumeOwner = owner.isObject() ? new VolumeOwner(text(owner, "user"), secret(owner.path("password"), name, "volumeOwner.password")) : null;
        return new Machine(name, text(document, "address"), sshSettings, text(document, "serialNumber"), text(document, "model"),
                document.path("memoryGb").isNumber() ? document.path("memoryGb").asInt() : null,
                Machine.Role.valueOf(document.path("role").asText("worker").toUpperCase(Locale.ROOT)), text(document, "cluster"), groups,
                text(document.path("mdm"), "enrollmentId"), volumeOwner, labels);
    }

    static Cluster cluster(JsonNode document) {
        String name = document.path("name").asText();
        JsonNode topology = document.path("topology");
        List<Topology.Link> links = new ArrayList<>();
        topology.path("links").forEach(link -> links.add(Topology.Link.parse(link.asText(), "stored link of cluster " + name)));
        JsonNode inference = document.path("inference");
        return new Cluster(name, text(document, "macosVersion"), new Topology(Topology.Kind.fromYaml(topology.path("kind").asText()), links),
                new InferenceSettings(text(inference, "model"),
                        InferenceSettings.Parallelism.valueOf(inference.path("parallelism").asText("tensor").toUpperCase(Locale.ROOT)),
                        inference.path("port").asInt(InferenceSettings.DEFAULT_PORT), text(inference, "runtime"),
                        inference.path("settings").isObject() ? JSON.convertValue(inference.path("settings"), MAP) : Map.of()),
                new ClusterSupervision("reboot".equals(document.path("supervision").path("rdmaFailure").asText())));
    }

    static MdmServer mdm(JsonNode document) {
        return new MdmServer(document.path("kind").asText(MdmServer.DEFAULT_KIND), document.path("url").asText(), secret(document.path("apiToken"), "the MDM server", "apiToken"));
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.path(field);
        return value.isNull() || value.isMissingNode() ? null : value.asText();
    }

    private static SecretReference secret(JsonNode value, String owner, String field) {
        if (value.isNull() || value.isMissingNode()) {
            return null;
        }
        return SecretReference.parse(value.asText()).orElseThrow(() -> new IllegalStateException(
                field + " of " + owner + " in the applied inventory is not a secret reference (env:NAME or file:PATH)"));
    }

    private static void putIfPresent(Map<String, Object> document, String key, Object value) {
        if (value != null) {
            document.put(key, value);
        }
    }

    /** Dotted field names to text values; lists become one field ("[a, b]"), empty maps vanish. */
    static Map<String, String> flatten(Map<String, ?> document) {
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
