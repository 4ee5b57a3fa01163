package io.macfleet.deployment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.macfleet.cabling.PeerConfiguration;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The node's cluster file for a deployment ({@code schemas/node-cluster.schema.json}): the ranks in order with their
 * management addresses, weights by memory and ports, and for each cable its point-to-point addresses (from the
 * checked cabling). The document is validated against the schema before it is returned, so a file the node would
 * refuse is never written to a Mac.
 */
public final class NodeClusterConfig {
    static final String SCHEMA_RESOURCE = "schemas/node-cluster.schema.json";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
    private static volatile JsonSchema schema;

    private NodeClusterConfig() {
    }

    /**
     * @param links the cables' point-to-point links of the checked cabling (both directions), or none: then the
     *              ranks reach each other at their management addresses
     */
    public static String render(String cluster, String parallelism, List<RankTarget> ranks, List<PeerConfiguration.PeerLink> links) {
        if (!Set.of("tensor", "pipeline").contains(parallelism)) {
            throw new IllegalArgumentException("parallelism must be tensor or pipeline, got " + parallelism);
        }
        Set<Integer> numbers = ranks.stream().map(RankTarget::rank).collect(Collectors.toCollection(TreeSet::new));
        if (numbers.size() != ranks.size() || (!ranks.isEmpty() && (int) ((TreeSet<Integer>) numbers).last() != ranks.size() - 1)) {
            throw new IllegalArgumentException("ranks of " + cluster + " must be 0.." + (ranks.size() - 1) + " once each, got " + numbers);
        }
        Map<String, RankTarget> byMachine = ranks.stream().collect(Collectors.toMap(RankTarget::machine, Function.identity()));
        int unit = ranks.stream().mapToInt(RankTarget::memoryGb).filter(memory -> memory > 0)
                .reduce((a, b) -> BigInteger.valueOf(a).gcd(BigInteger.valueOf(b)).intValue()).orElse(1);
        ObjectNode root = JSON.createObjectNode();
        root.put("cluster", cluster);
        root.put("transport", "tcp");
        root.put("parallelism", parallelism);
        ArrayNode array = root.putArray("ranks");
        for (RankTarget rank : ranks.stream().sorted(java.util.Comparator.comparingInt(RankTarget::rank)).toList()) {
            ObjectNode node = array.addObject();
            node.put("rank", rank.rank());
            node.put("machine", rank.machine());
            node.put("address", rank.managementAddress());
            node.put("weight", rank.memoryGb() > 0 ? rank.memoryGb() / unit : 1);
            node.put("clusterPort", rank.clusterPort());
            node.put("httpPort", rank.httpPort());
            List<PeerConfiguration.PeerLink> own = links.stream().filter(link -> link.machine().equals(rank.machine())
                    && byMachine.containsKey(link.peer())).toList();
            if (!own.isEmpty()) {
                ArrayNode peers = node.putArray("peers");
                for (PeerConfiguration.PeerLink link : own) {
                    ObjectNode peer = peers.addObject();
                    peer.put("rank", byMachine.get(link.peer()).rank());
                    peer.put("machine", link.peer());
                    peer.put("port", link.port());
                    peer.put("interface", link.networkInterface());
                    peer.put("rdmaDevice", link.rdmaDevice());
                    peer.put("localAddress", link.localAddress());
                    peer.put("peerAddress", link.peerAddress());
                    peer.put("prefixLength", PeerConfiguration.PREFIX_LENGTH);
                }
            }
        }
        validate(root);
        try {
            return JSON.writeValueAsString(root) + "\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Refuses a document the schema does not accept, naming each problem. */
    static void validate(JsonNode document) {
        Set<ValidationMessage> problems = schema().validate(document);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the rendered cluster file does not follow " + SCHEMA_RESOURCE + ": "
                    + problems.stream().map(ValidationMessage::getMessage).sorted().collect(Collectors.joining("; ")));
        }
    }

    private static JsonSchema schema() {
        JsonSchema loaded = schema;
        if (loaded == null) {
            try (InputStream in = NodeClusterConfig.class.getClassLoader().getResourceAsStream(SCHEMA_RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(SCHEMA_RESOURCE + " is missing from the class path");
                }
                loaded = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(new ObjectMapper().readTree(in));
                schema = loaded;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return loaded;
    }
}
