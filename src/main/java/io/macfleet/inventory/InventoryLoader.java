package io.macfleet.inventory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonNodePath;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.macfleet.secrets.SecretReference;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Reads an inventory directory: every {@code *.yaml}/{@code *.yml} file (recursively, in path order, hidden
 * directories skipped) is validated against {@code schemas/inventory.schema.json}, then the checks a schema
 * cannot make are run over the union of the files. All errors are collected, never only the first.
 */
public final class InventoryLoader {

    public static final String SCHEMA_RESOURCE = "schemas/inventory.schema.json";

    private static final JsonSchema SCHEMA = loadSchema();
    private static final Pattern LINK = Pattern.compile("^\\s*([a-z0-9][a-z0-9-]*):(\\d+)\\s*<->\\s*([a-z0-9][a-z0-9-]*):(\\d+)\\s*$");
    private static final int THUNDERBOLT_PORTS = Topology.THUNDERBOLT_PORTS;
    private static final int FULL_MESH_MINIMUM = 2;
    private static final int FULL_MESH_MAXIMUM = 6;
    private static final Set<String> SECRET_FIELDS = Set.of("ssh/privateKey", "ssh/passphrase", "volumeOwner/password");

    private InventoryLoader() {
    }

    /**
     * Loads and checks the inventory in a directory.
     *
     * @throws InventoryDirectoryException when the directory itself cannot be read
     */
    public static LoadResult load(Path directory) {
        return new Run().load(files(directory));
    }

    /**
     * The text of every YAML file {@link #load(Path)} reads, keyed by its path relative to the directory: what a saved
     * plan keeps, so that applying it applies exactly what was planned even if the directory changes afterwards.
     */
    public static Map<String, String> texts(Path directory) {
        Map<String, String> texts = new java.util.TreeMap<>();
        for (Path file : files(directory)) {
            try {
                texts.put(directory.relativize(file).toString(), PositionedYaml.decodeUtf8(Files.readAllBytes(file)));
            } catch (IOException | PositionedYaml.SyntaxException e) {
                throw new InventoryDirectoryException(file + ": cannot be read (" + e.getMessage() + ")");
            }
        }
        return texts;
    }

    /** Loads an inventory given as YAML texts keyed by file name (a saved plan's copy of its directory). */
    public static LoadResult loadTexts(Map<String, String> texts) {
        return new Run().loadTexts(new java.util.TreeMap<>(texts));
    }

    private static List<Path> files(Path directory) {
        if (!Files.isDirectory(directory)) {
            throw new InventoryDirectoryException(directory + ": not a directory; expected a directory of inventory YAML files");
        }
        List<Path> files;
        try (Stream<Path> walk = Files.walk(directory)) {
            files = walk.filter(Files::isRegularFile)
                    .filter(file -> !isHidden(directory.relativize(file)))
                    .filter(file -> file.getFileName().toString().endsWith(".yaml") || file.getFileName().toString().endsWith(".yml"))
                    .sorted(Comparator.comparing(Path::toString))
                    .toList();
        } catch (IOException | UncheckedIOException e) {
            throw new InventoryDirectoryException(directory + ": cannot be read (" + e.getMessage() + ")");
        }
        if (files.isEmpty()) {
            // An empty inventory would plan the removal of everything: far more likely a wrong path than intent.
            throw new InventoryDirectoryException(directory + ": no *.yaml or *.yml files; expected an inventory directory"
                    + " (an intentionally empty inventory is a file with 'machines: []')");
        }
        return files;
    }

    /** The name errors give an inventory that arrives as one document in a request: inventory.yaml:12:5: ... */
    public static final String DOCUMENT_NAME = "inventory.yaml";

    /**
     * Loads and checks an inventory given as one YAML document (the REST API and the console, where it arrives in a
     * request); errors name it {@value #DOCUMENT_NAME}.
     */
    public static LoadResult loadDocument(String yaml) {
        return new Run().loadTexts(Map.of(DOCUMENT_NAME, yaml));
    }

    private static boolean isHidden(Path relative) {
        for (Path part : relative) {
            if (part.toString().startsWith(".")) {
                return true;
            }
        }
        return false;
    }

    /** Where a runtime's settings schema is on the class path: {@value}NAME.schema.json. */
    public static final String RUNTIME_SCHEMAS = "schemas/runtimes/";
    private static final Map<String, Optional<JsonSchema>> RUNTIME_SCHEMA_CACHE = new java.util.concurrent.ConcurrentHashMap<>();

    /** The settings schema a runtime ships, or empty: no such runtime. */
    static Optional<JsonSchema> runtimeSchema(String runtime) {
        if (!runtime.matches("[a-z][a-z0-9.-]*") || runtime.contains("..")) {
            return Optional.empty();
        }
        return RUNTIME_SCHEMA_CACHE.computeIfAbsent(runtime, name -> {
            try (InputStream in = InventoryLoader.class.getClassLoader().getResourceAsStream(RUNTIME_SCHEMAS + name + ".schema.json")) {
                if (in == null) {
                    return Optional.empty();
                }
                return Optional.of(JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(new ObjectMapper().readTree(in)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private static JsonSchema loadSchema() {
        try (InputStream in = InventoryLoader.class.getClassLoader().getResourceAsStream(SCHEMA_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(SCHEMA_RESOURCE + " is missing from the class path");
            }
            JsonNode schema = new ObjectMapper().readTree(in);
            return JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(schema);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The schema as text, for `macfleet inventory schema` and the docs. */
    public static String schemaText() {
        try (InputStream in = InventoryLoader.class.getClassLoader().getResourceAsStream(SCHEMA_RESOURCE)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private record SourceFile(Path path, PositionedYaml yaml) {
    }

    /** A node and where it was written. */
    private record Located(SourceFile file, String pointer, JsonNode node) {
        Located child(String name) {
            JsonNode child = node.isArray() ? node.path(Integer.parseInt(name)) : node.path(name);
            return new Located(file, pointer + "/" + PositionedYaml.escape(name), child);
        }
    }

    private record Expanded(String name, String address, Located entry, int index) {
    }

    private static final class Run {
        private final List<InventoryError> errors = new ArrayList<>();
        private final io.macfleet.secrets.SecretPolicy secretPolicy = io.macfleet.secrets.SecretPolicy.configured();
        private boolean everyFileRead = true;
        private Located defaults;
        private final Map<String, Located> groups = new LinkedHashMap<>();
        private final List<Located> clusterEntries = new ArrayList<>();
        private final List<Located> machineEntries = new ArrayList<>();
        private Located mdm;

        LoadResult load(List<Path> files) {
            for (Path file : files) {
                read(file);
            }
            return finish();
        }

        private LoadResult finish() {
            checkSecrets();
            Map<String, Located> clustersByName = new LinkedHashMap<>();
            List<Cluster> clusters = resolveClusters(clustersByName);
            Map<String, Located> machinesByName = new HashMap<>();
            List<Machine> machines = resolveMachines(clustersByName, machinesByName);
            checkClusters(clusters, clustersByName, machines, machinesByName);
            errors.sort(null);
            if (!errors.isEmpty()) {
                return new LoadResult(null, errors);
            }
            MdmServer mdmServer = mdm == null ? null
                    : new MdmServer(mdm.node().path("kind").asText(MdmServer.DEFAULT_KIND), mdm.node().path("url").asText(), secret(mdm.node().path("apiToken")));
            return new LoadResult(new Inventory(
                    clusters.stream().sorted(Comparator.comparing(Cluster::name)).toList(),
                    machines.stream().sorted(Comparator.comparing(Machine::name)).toList(),
                    mdmServer), List.of());
        }

        private void error(SourceFile file, String pointer, String message) {
            PositionedYaml.Position position = file.yaml().positionOf(pointer);
            errors.add(new InventoryError(file.path(), position.line(), position.column(), message));
        }

        private void error(Located located, String message) {
            error(located.file(), located.pointer(), message);
        }

        private String where(Located located) {
            PositionedYaml.Position position = located.file().yaml().positionOf(located.pointer());
            return located.file().path() + ":" + position.line() + ":" + position.column();
        }

        private void read(Path path) {
            String text;
            try {
                // Refused before reading: a huge file must not cost the memory and the parsing time (issue 14).
                if (Files.size(path) > PositionedYaml.MAXIMUM_DOCUMENT_BYTES) {
                    throw new InventoryDirectoryException(path + ": " + Files.size(path) + " bytes, " + PositionedYaml.LIMIT_EXCEEDED
                            + " of " + PositionedYaml.MAXIMUM_DOCUMENT_BYTES + " bytes for one YAML file; expected smaller files (split the inventory)");
                }
                text = PositionedYaml.decodeUtf8(Files.readAllBytes(path));
            } catch (PositionedYaml.SyntaxException e) {
                errors.add(new InventoryError(path, e.position().line(), e.position().column(), e.getMessage()));
                everyFileRead = false;
                return;
            } catch (IOException e) {
                errors.add(new InventoryError(path, 1, 1, "cannot read the file (" + e.getClass().getSimpleName()
                        + "); expected a readable UTF-8 YAML file"));
                everyFileRead = false;
                return;
            }
            read(path, text);
        }

        LoadResult loadTexts(Map<String, String> texts) {
            texts.forEach((name, text) -> read(Path.of(name), text));
            return finish();
        }

        private void read(Path path, String text) {
            PositionedYaml yaml;
            try {
                yaml = PositionedYaml.parse(text);
            } catch (PositionedYaml.SyntaxException e) {
                errors.add(new InventoryError(path, e.position.line(), e.position.column(), e.getMessage()));
                everyFileRead = false;
                return;
            }
            SourceFile file = new SourceFile(path, yaml);
            for (ValidationMessage message : SCHEMA.validate(yaml.root())) {
                schemaError(file, message);
            }
            JsonNode root = yaml.root();
            if (!root.isObject()) {
                return;
            }
            Located top = new Located(file, "", root);
            if (root.has("defaults") && root.get("defaults").isObject()) {
                if (defaults != null) {
                    error(top.child("defaults"), "defaults are already defined at " + where(defaults)
                            + "; expected one defaults section in the whole inventory");
                } else {
                    defaults = top.child("defaults");
                }
            }
            if (root.path("groups").isObject()) {
                Located groupsNode = top.child("groups");
                for (String name : iterable(root.get("groups").fieldNames())) {
                    Located group = groupsNode.child(name);
                    Located previous = groups.putIfAbsent(name, group);
                    if (previous != null) {
                        error(group, "group '" + name + "' is already defined at " + where(previous) + "; expected unique group names");
                    }
                }
            }
            addItems(top.child("clusters"), clusterEntries);
            addItems(top.child("machines"), machineEntries);
            if (root.path("mdm").isObject()) {
                if (mdm != null) {
                    error(top.child("mdm"), "the MDM server is already defined at " + where(mdm) + "; expected one mdm section");
                } else {
                    mdm = top.child("mdm");
                }
            }
        }

        private static void addItems(Located list, List<Located> into) {
            if (list.node().isArray()) {
                for (int index = 0; index < list.node().size(); index++) {
                    Located item = list.child(Integer.toString(index));
                    if (item.node().isObject()) {
                        into.add(item);
                    }
                }
            }
        }

        private void schemaError(SourceFile file, ValidationMessage message) {
            JsonNodePath location = message.getInstanceLocation();
            List<Object> elements = new ArrayList<>();
            for (int index = 0; index < location.getNameCount(); index++) {
                elements.add(location.getElement(index));
            }
            String pointer = PositionedYaml.pointer(elements);
            String text = message.getMessage();
            String prefix = location + ": ";
            if (text.startsWith(prefix)) {
                text = text.substring(prefix.length());
            }
            String field = displayPath(elements);
            if ("additionalProperties".equals(message.getType()) && message.getProperty() != null) {
                pointer = pointer + "/" + PositionedYaml.escape(message.getProperty());
                text = "unknown key '" + message.getProperty() + "'; expected only the keys the inventory schema defines";
            } else if ("type".equals(message.getType()) && field.endsWith("macosVersion")) {
                text = text + " (quote the version, e.g. macosVersion: \"26.2\")";
            }
            error(file, pointer, (field.isEmpty() ? "" : field + ": ") + text);
        }

        private static String displayPath(List<Object> elements) {
            StringBuilder builder = new StringBuilder();
            for (Object element : elements) {
                if (element instanceof Integer index) {
                    builder.append('[').append(index).append(']');
                } else {
                    builder.append(builder.isEmpty() ? "" : ".").append(element);
                }
            }
            return builder.toString();
        }

        // ---- secrets

        private void checkSecrets() {
            List<Located> settings = new ArrayList<>();
            if (defaults != null) {
                settings.add(defaults);
            }
            settings.addAll(groups.values());
            settings.addAll(machineEntries);
            for (Located setting : settings) {
                for (String field : SECRET_FIELDS) {
                    String[] parts = field.split("/");
                    checkSecret(setting.child(parts[0]).child(parts[1]), parts[0] + "." + parts[1]);
                }
            }
            if (mdm != null) {
                checkSecret(mdm.child("apiToken"), "mdm.apiToken");
            }
        }

        private void checkSecret(Located value, String field) {
            if (!value.node().isTextual()) {
                return;
            }
            Optional<SecretReference> reference = SecretReference.parse(value.node().asText());
            if (reference.isPresent()) {
                // Only secret directories and MACFLEET_ variables: the values are sent to the machines (issue 14).
                secretPolicy.problem(reference.get()).ifPresent(problem -> error(value, field + ": " + problem));
                return;
            }
            String text = value.node().asText();
            String what = text.contains("PRIVATE KEY") ? "what looks like a literal private key"
                    : text.startsWith("env:") || text.startsWith("file:") ? "a malformed secret reference"
                    : "a literal secret";
            error(value, field + " holds " + what + " (value not shown); expected a secret reference env:NAME or file:PATH");
        }

        private static SecretReference secret(JsonNode node) {
            return node.isTextual() ? SecretReference.parse(node.asText()).orElse(null) : null;
        }

        // ---- clusters

        private List<Cluster> resolveClusters(Map<String, Located> clustersByName) {
            List<Cluster> clusters = new ArrayList<>();
            for (Located entry : clusterEntries) {
                JsonNode node = entry.node();
                String name = text(node, "name");
                if (name == null) {
                    continue;
                }
                Located previous = clustersByName.putIfAbsent(name, entry);
                if (previous != null) {
                    error(entry.child("name"), "cluster name '" + name + "' is already used at " + where(previous.child("name"))
                            + "; expected unique cluster names");
                    continue;
                }
                String version = text(node, "macosVersion");
                if (version != null && !MacosVersion.isValid(version)) {
                    error(entry.child("macosVersion"), "macosVersion '" + version
                            + "' is not a valid macOS version; expected MAJOR[.MINOR[.PATCH]] with major 11 to 99, e.g. \"26.2\"");
                }
                JsonNode topology = node.path("topology");
                Topology.Kind kind = Topology.Kind.fromYaml(text(topology, "kind"));
                JsonNode inference = node.path("inference");
                InferenceSettings.Parallelism parallelism = "pipeline".equals(text(inference, "parallelism"))
                        ? InferenceSettings.Parallelism.PIPELINE : InferenceSettings.Parallelism.TENSOR;
                int port = inference.path("port").canConvertToInt() ? inference.path("port").intValue() : InferenceSettings.DEFAULT_PORT;
                String runtime = text(inference, "runtime");
                Map<String, Object> runtimeSettings = runtimeSettings(entry.child("inference"), runtime);
                clusters.add(new Cluster(name, version, new Topology(kind, List.of()),
                        new InferenceSettings(text(inference, "model"), parallelism, port, runtime, runtimeSettings),
                        new ClusterSupervision("reboot".equals(text(node.path("supervision"), "rdmaFailure")))));
            }
            return clusters;
        }

        /**
         * The runtime's settings, checked against its schema ({@code schemas/runtimes/RUNTIME.schema.json}): a runtime
         * without one is unknown. Errors point into the settings, file:line:column like every other inventory error.
         */
        private Map<String, Object> runtimeSettings(Located inference, String runtime) {
            String name = runtime == null ? InferenceSettings.BUNDLED : runtime;
            Located settings = inference.child("settings");
            Optional<JsonSchema> schema = runtimeSchema(name);
            if (schema.isEmpty()) {
                error(runtime == null ? inference : inference.child("runtime"), "inference.runtime: unknown runtime '" + name
                        + "'; expected a runtime that ships " + RUNTIME_SCHEMAS + name + ".schema.json, e.g. bundled or llama.cpp");
                return Map.of();
            }
            if (!settings.node().isObject()) {
                return Map.of();
            }
            for (ValidationMessage message : schema.get().validate(settings.node())) {
                JsonNodePath location = message.getInstanceLocation();
                List<Object> elements = new ArrayList<>();
                for (int index = 0; index < location.getNameCount(); index++) {
                    elements.add(location.getElement(index));
                }
                String pointer = settings.pointer() + PositionedYaml.pointer(elements);
                String field = "inference.settings" + (elements.isEmpty() ? "" : "." + displayPath(elements));
                String text = message.getMessage();
                String prefix = location + ": ";
                if (text.startsWith(prefix)) {
                    text = text.substring(prefix.length());
                }
                if ("additionalProperties".equals(message.getType()) && message.getProperty() != null) {
                    pointer = pointer + "/" + PositionedYaml.escape(message.getProperty());
                    text = "unknown setting '" + message.getProperty() + "' of runtime " + name + "; expected only the settings "
                            + RUNTIME_SCHEMAS + name + ".schema.json defines";
                }
                error(settings.file(), pointer, field + ": " + text);
            }
            checkSecret(settings.child("apiKey"), "inference.settings.apiKey");
            return new ObjectMapper().convertValue(settings.node(), new com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>>() {
            });
        }

        private void checkClusters(List<Cluster> clusters, Map<String, Located> clustersByName, List<Machine> machines,
                                   Map<String, Located> machinesByName) {
            if (!everyFileRead) {
                // A file that could not be parsed may define what the others refer to: no guessing.
                return;
            }
            for (int index = 0; index < clusters.size(); index++) {
                Cluster cluster = clusters.get(index);
                Located entry = clustersByName.get(cluster.name());
                List<Machine> members = machines.stream().filter(machine -> cluster.name().equals(machine.cluster())).toList();
                if (cluster.topology().kind() == Topology.Kind.FULL_MESH
                        && (members.size() < FULL_MESH_MINIMUM || members.size() > FULL_MESH_MAXIMUM)) {
                    error(entry.child("name"), "full-mesh cluster '" + cluster.name() + "' has " + members.size()
                            + " machine(s); expected 2 to 6 (a Thunderbolt 5 full mesh; other sizes need topology kind explicit with links)");
                }
                List<Machine> coordinators = members.stream().filter(machine -> machine.role() == Machine.Role.COORDINATOR).toList();
                if (coordinators.size() > 1) {
                    error(entry.child("name"), "cluster '" + cluster.name() + "' has " + coordinators.size() + " coordinators ("
                            + coordinators.stream().map(Machine::name).collect(Collectors.joining(", "))
                            + "); expected at most one machine with role coordinator");
                }
                List<Topology.Link> links = checkLinks(cluster, entry, members, machinesByName);
                clusters.set(index, new Cluster(cluster.name(), cluster.macosVersion(),
                        new Topology(cluster.topology().kind(), links), cluster.inference(), cluster.supervision()));
            }
        }

        private List<Topology.Link> checkLinks(Cluster cluster, Located entry, List<Machine> members, Map<String, Located> machinesByName) {
            Located linksNode = entry.child("topology").child("links");
            if (cluster.topology().kind() == Topology.Kind.EXPLICIT && linksNode.node().size() == 0) {
                error(entry.child("topology").child("kind"), "cluster '" + cluster.name()
                        + "' has topology kind explicit but no links; expected topology.links such as 'studio-01:1 <-> studio-02:1'");
            }
            Set<String> memberNames = members.stream().map(Machine::name).collect(Collectors.toSet());
            Map<String, Located> usedPorts = new HashMap<>();
            List<Topology.Link> links = new ArrayList<>();
            for (int index = 0; index < linksNode.node().size(); index++) {
                Located link = linksNode.child(Integer.toString(index));
                if (!link.node().isTextual()) {
                    continue;
                }
                Matcher matcher = LINK.matcher(link.node().asText());
                if (!matcher.matches()) {
                    error(link, "link '" + link.node().asText() + "' is malformed; expected 'MACHINE:PORT <-> MACHINE:PORT', e.g. 'studio-01:2 <-> studio-03:5'");
                    continue;
                }
                PortReference from = endpoint(matcher.group(1), matcher.group(2));
                PortReference to = endpoint(matcher.group(3), matcher.group(4));
                boolean good = true;
                for (PortReference endpoint : List.of(from, to)) {
                    if (!machinesByName.containsKey(endpoint.machine())) {
                        error(link, "link endpoint " + endpoint + " names an unknown machine '" + endpoint.machine()
                                + "'; expected a machine of cluster '" + cluster.name() + "'");
                        good = false;
                    } else if (!memberNames.contains(endpoint.machine())) {
                        error(link, "link endpoint " + endpoint + ": machine '" + endpoint.machine() + "' is not in cluster '"
                                + cluster.name() + "'; expected a machine of this cluster");
                        good = false;
                    }
                    if (endpoint.port() < 1 || endpoint.port() > THUNDERBOLT_PORTS) {
                        error(link, "link endpoint " + endpoint + " names port " + endpoint.port()
                                + "; expected a Thunderbolt 5 port 1 to 6");
                        good = false;
                    } else {
                        Located previous = usedPorts.putIfAbsent(endpoint.toString(), link);
                        if (previous != null) {
                            error(link, "port " + endpoint + " is already cabled by the link at " + where(previous)
                                    + "; expected each port in at most one link");
                            good = false;
                        }
                    }
                }
                if (from.machine().equals(to.machine())) {
                    error(link, "link " + from + " <-> " + to + " connects a machine to itself; expected two different machines");
                    good = false;
                }
                if (good) {
                    links.add(new Topology.Link(from, to));
                }
            }
            return links;
        }

        private static PortReference endpoint(String machine, String port) {
            return new PortReference(machine, port.length() > 6 ? Integer.MAX_VALUE : Integer.parseInt(port));
        }

        // ---- machines

        private List<Expanded> expand(Located entry) {
            String name = text(entry.node(), "name");
            String address = text(entry.node(), "address");
            if (name == null || address == null) {
                return List.of();
            }
            Ranges.Range nameRange = Ranges.parse(name);
            Ranges.Range addressRange = Ranges.parse(address);
            if (nameRange == null && addressRange == null) {
                return List.of(new Expanded(name, address, entry, 0));
            }
            boolean good = true;
            for (var range : new Object[][] {{nameRange, "name", name}, {addressRange, "address", address}}) {
                Ranges.Range parsed = (Ranges.Range) range[0];
                if (parsed != null && (parsed.start() > parsed.end() || parsed.size() > Ranges.MAXIMUM_SIZE)) {
                    error(entry.child((String) range[1]), "range '" + range[2] + "' is " + (parsed.start() > parsed.end() ? "empty" : "too large")
                            + "; expected [START-END] with START <= END and at most " + Ranges.MAXIMUM_SIZE + " values");
                    good = false;
                }
            }
            if (!good) {
                return List.of();
            }
            if (nameRange == null) {
                error(entry.child("address"), "address range '" + address + "' needs a name range; expected a name such as studio-[01-"
                        + addressRange.size() + "] with as many values");
                return List.of();
            }
            if (addressRange == null) {
                error(entry.child("address"), "address '" + address + "' is a single address for the " + nameRange.size()
                        + " machines of '" + name + "'; expected an address range of the same length, e.g. 192.168.50.[11-"
                        + (10 + nameRange.size()) + "]");
                return List.of();
            }
            if (nameRange.size() != addressRange.size()) {
                error(entry.child("address"), "address range '" + address + "' has " + addressRange.size() + " values but name range '"
                        + name + "' has " + nameRange.size() + "; expected ranges of the same length");
                return List.of();
            }
            List<String> names = nameRange.expand();
            List<String> addresses = addressRange.expand();
            List<Expanded> expanded = new ArrayList<>();
            for (int index = 0; index < names.size(); index++) {
                expanded.add(new Expanded(names.get(index), addresses.get(index), entry, index));
            }
            return expanded;
        }

        private List<Machine> resolveMachines(Map<String, Located> clustersByName, Map<String, Located> machinesByName) {
            List<Machine> machines = new ArrayList<>();
            Map<String, String> addressOwners = new HashMap<>();
            Map<String, Located> addressPlaces = new HashMap<>();
            for (Located entry : machineEntries) {
                List<String> groupNames = new ArrayList<>();
                ObjectNode merged = JsonNodeFactory.instance.objectNode();
                Map<String, Located> origins = new HashMap<>();
                if (defaults != null) {
                    merge(merged, defaults, "", origins);
                }
                Located groupList = entry.child("groups");
                for (int index = 0; index < groupList.node().size(); index++) {
                    Located groupReference = groupList.child(Integer.toString(index));
                    String groupName = groupReference.node().asText();
                    Located group = groups.get(groupName);
                    if (group == null) {
                        if (everyFileRead) {
                            error(groupReference, "unknown group '" + groupName + "'; expected one of: " + namesOrNone(groups.keySet()));
                        }
                        continue;
                    }
                    groupNames.add(groupName);
                    merge(merged, group, "", origins);
                }
                merge(merged, entry, "", origins);
                String clusterName = text(merged, "cluster");
                if (clusterName != null && !clustersByName.containsKey(clusterName) && everyFileRead) {
                    error(origins.get("cluster"), "cluster '" + clusterName + "' is not defined; expected one of: "
                            + namesOrNone(clustersByName.keySet()));
                }
                for (Expanded expanded : expand(entry)) {
                    Located nameAt = entry.child("name");
                    Located previous = machinesByName.putIfAbsent(expanded.name(), nameAt);
                    if (previous != null) {
                        error(nameAt, "machine name '" + expanded.name() + "' is already used at " + where(previous)
                                + "; expected unique machine names");
                        continue;
                    }
                    String addressProblem = addressProblem(expanded.address());
                    if (addressProblem != null) {
                        error(entry.child("address"), "address '" + expanded.address() + "' of machine '" + expanded.name() + "' "
                                + addressProblem + "; expected an IPv4 address (four numbers 0 to 255) or a host name");
                        continue;
                    }
                    Machine machine = machine(expanded, merged, groupNames);
                    String addressKey = machine.address() + " port " + machine.ssh().port();
                    String owner = addressOwners.putIfAbsent(addressKey, machine.name());
                    if (owner != null) {
                        error(entry.child("address"), "address " + addressKey + " of machine '" + machine.name()
                                + "' is already used by machine '" + owner + "' at " + where(addressPlaces.get(addressKey))
                                + "; expected a unique address and SSH port per machine");
                    } else {
                        addressPlaces.put(addressKey, entry.child("address"));
                    }
                    machines.add(machine);
                }
            }
            return machines;
        }

        private static final Pattern IPV4_SHAPE = Pattern.compile("^[0-9]+(\\.[0-9]+)*$");
        private static final Pattern HOST_NAME = Pattern.compile("^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\\.?$");

        /** Null for a plausible address, else what is wrong (ranges are checked after expansion). */
        private static String addressProblem(String address) {
            if (IPV4_SHAPE.matcher(address).matches()) {
                String[] parts = address.split("\\.");
                if (parts.length != 4) {
                    return "has " + parts.length + " numbers";
                }
                for (String part : parts) {
                    if (part.length() > 3 || Integer.parseInt(part) > 255) {
                        return "has the number " + part + " above 255";
                    }
                }
                return null;
            }
            if (address.contains(":")) {
                return null; // IPv6: left to the resolver
            }
            return HOST_NAME.matcher(address).matches() ? null : "is neither an IPv4 address nor a valid host name";
        }

        private static String namesOrNone(Set<String> names) {
            return names.isEmpty() ? "(none defined)" : String.join(", ", new java.util.TreeSet<>(names));
        }

        /** Deep merge, later sources win; remembers where each field was last set. */
        private static void merge(ObjectNode target, Located source, String prefix, Map<String, Located> origins) {
            if (!source.node().isObject()) {
                return;
            }
            for (String key : iterable(source.node().fieldNames())) {
                if (prefix.isEmpty() && (key.equals("name") || key.equals("address") || key.equals("groups"))) {
                    continue;
                }
                Located child = source.child(key);
                String path = prefix.isEmpty() ? key : prefix + "." + key;
                origins.put(path, child);
                if (child.node().isObject()) {
                    if (!(target.get(key) instanceof ObjectNode)) {
                        target.set(key, JsonNodeFactory.instance.objectNode());
                    }
                    merge((ObjectNode) target.get(key), child, path, origins);
                } else {
                    target.set(key, child.node().deepCopy());
                }
            }
        }

        private static Machine machine(Expanded expanded, ObjectNode merged, List<String> groupNames) {
            JsonNode ssh = merged.path("ssh");
            SshSettings sshSettings = new SshSettings(
                    orDefault(text(ssh, "user"), SshSettings.DEFAULT_USER),
                    ssh.path("port").canConvertToInt() && ssh.path("port").isIntegralNumber() ? ssh.path("port").intValue() : SshSettings.DEFAULT_PORT,
                    secret(ssh.path("privateKey")), secret(ssh.path("passphrase")), text(ssh, "hostKey"));
            JsonNode volumeOwnerNode = merged.path("volumeOwner");
            VolumeOwner volumeOwner = volumeOwnerNode.isObject()
                    ? new VolumeOwner(text(volumeOwnerNode, "user"), secret(volumeOwnerNode.path("password"))) : null;
            Map<String, String> labels = new TreeMap<>();
            merged.path("labels").properties().forEach(entry -> labels.put(entry.getKey(), entry.getValue().asText()));
            JsonNode memory = merged.path("memoryGb");
            return new Machine(expanded.name(), expanded.address(), sshSettings, text(merged, "serialNumber"), text(merged, "model"),
                    memory.isIntegralNumber() && memory.canConvertToInt() ? memory.intValue() : null,
                    "coordinator".equals(text(merged, "role")) ? Machine.Role.COORDINATOR : Machine.Role.WORKER,
                    text(merged, "cluster"), groupNames, text(merged.path("mdm"), "enrollmentId"), volumeOwner, labels);
        }

        private static String orDefault(String value, String fallback) {
            return value == null ? fallback : value;
        }

        private static String text(JsonNode node, String field) {
            JsonNode value = node.path(field);
            return value.isTextual() ? value.asText() : null;
        }

        private static <T> Iterable<T> iterable(java.util.Iterator<T> iterator) {
            List<T> list = new ArrayList<>();
            iterator.forEachRemaining(list::add);
            return list;
        }
    }
}
