package io.macfleet.cabling;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The peer configuration the distributed engines need, generated from a passing cabling check:
 * <ul>
 * <li>an MLX {@code mlx.launch} hostfile, in the format {@code mlx.distributed_config} writes
 * ({@code {"backend", "envs", "hosts": [{"ssh", "ips", "rdma"}]}}; see MLX's
 * {@code python/mlx/_distributed_utils/common.py} and the JACCL section of its distributed docs): for
 * {@code jaccl}, row i column j names the RDMA device on machine i that reaches machine j, null on the
 * diagonal, and {@code ips} holds each machine's management address (rank 0's is the coordinator); for
 * {@code ring}, hosts in ring order, each with the addresses of its link to the previous host;</li>
 * <li>macfleet's own inference node cluster configuration ({@code schemas/node-cluster.schema.json}).</li>
 * </ul>
 */
public final class EngineConfigurations {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public enum Format { MLX_JACCL, MLX_RING, MACFLEET }

    private EngineConfigurations() {
    }

    /** Thrown when a configuration is asked for a cluster that cannot run it. */
    public static final class RefusedException extends RuntimeException implements io.macfleet.command.CommandFailure {
        @Override
        public Kind failureKind() {
            return Kind.CHECK_FAILED;
        }

        public RefusedException(String message) {
            super(message);
        }
    }

    /**
     * @param force emit even though the check failed (the output then carries the cluster's problems)
     */
    public static String render(Format format, CablingReport report, List<MachineCablingFacts> facts, List<String> envs, boolean force) {
        if (!force) {
            refuseUnlessFit(format, report);
        }
        PeerConfiguration peers = PeerConfiguration.from(report, facts);
        ObjectNode document = switch (format) {
            case MLX_JACCL -> jaccl(report, peers, envs);
            case MLX_RING -> ring(report, peers, envs);
            case MACFLEET -> macfleet(report, peers);
        };
        try {
            return JSON.writeValueAsString(document) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void refuseUnlessFit(Format format, CablingReport report) {
        if (format == Format.MLX_RING) {
            if (report.ringOrder().isEmpty()) {
                throw new RefusedException("cluster " + report.cluster() + " has no Thunderbolt ring through all machines ("
                        + report.verdict() + "); fix the cabling or pass --force");
            }
            return;
        }
        if (!report.passed()) {
            String errors = report.findings().stream().filter(finding -> finding.severity() == Finding.Severity.ERROR)
                    .map(Finding::message).limit(5).reduce((a, b) -> a + "; " + b).orElse("");
            throw new RefusedException("cluster " + report.cluster() + " fails the cabling check (" + report.count(Finding.Severity.ERROR)
                    + " errors: " + errors + "); fix them (macfleet cabling check) or pass --force");
        }
    }

    private static ObjectNode header(String backend, List<String> envs) {
        ObjectNode document = NODES.objectNode();
        document.put("backend", backend);
        ArrayNode environment = document.putArray("envs");
        envs.forEach(environment::add);
        return document;
    }

    private static ObjectNode jaccl(CablingReport report, PeerConfiguration peers, List<String> envs) {
        ObjectNode document = header("jaccl", envs);
        ArrayNode hosts = document.putArray("hosts");
        for (String machine : report.machines()) {
            ObjectNode host = hosts.addObject();
            host.put("ssh", machine);
            ArrayNode ips = host.putArray("ips");
            peers.managementAddress(machine).ifPresent(ips::add);
            ArrayNode rdma = host.putArray("rdma");
            for (String peer : report.machines()) {
                List<PeerConfiguration.PeerLink> links = peers.between(machine, peer);
                if (peer.equals(machine) || links.isEmpty()) {
                    rdma.addNull();
                } else {
                    rdma.add(links.get(0).rdmaDevice());
                }
            }
        }
        return document;
    }

    private static ObjectNode ring(CablingReport report, PeerConfiguration peers, List<String> envs) {
        ObjectNode document = header("ring", envs);
        ArrayNode hosts = document.putArray("hosts");
        List<String> order = report.ringOrder().orElse(report.machines());
        for (int index = 0; index < order.size(); index++) {
            String machine = order.get(index);
            String previous = order.get(Math.floorMod(index - 1, order.size()));
            ObjectNode host = hosts.addObject();
            host.put("ssh", machine);
            ArrayNode ips = host.putArray("ips");
            peers.between(machine, previous).stream().limit(1).forEach(link -> ips.add(link.localAddress()));
            host.putArray("rdma");
        }
        return document;
    }

    private static ObjectNode macfleet(CablingReport report, PeerConfiguration peers) {
        ObjectNode document = NODES.objectNode();
        document.put("cluster", report.cluster());
        document.put("transport", report.passed() ? "rdma" : "tcp");
        ArrayNode ranks = document.putArray("ranks");
        for (int rank = 0; rank < report.machines().size(); rank++) {
            String machine = report.machines().get(rank);
            ObjectNode entry = ranks.addObject();
            entry.put("rank", rank);
            entry.put("machine", machine);
            peers.managementAddress(machine).ifPresent(address -> entry.put("address", address));
            ArrayNode peerLinks = entry.putArray("peers");
            for (int peerRank = 0; peerRank < report.machines().size(); peerRank++) {
                String peer = report.machines().get(peerRank);
                for (PeerConfiguration.PeerLink link : peers.between(machine, peer)) {
                    ObjectNode peerLink = peerLinks.addObject();
                    peerLink.put("rank", peerRank);
                    peerLink.put("machine", peer);
                    peerLink.put("port", link.port());
                    peerLink.put("interface", link.networkInterface());
                    peerLink.put("rdmaDevice", link.rdmaDevice());
                    peerLink.put("localAddress", link.localAddress());
                    peerLink.put("peerAddress", link.peerAddress());
                    peerLink.put("prefixLength", PeerConfiguration.PREFIX_LENGTH);
                }
            }
        }
        return document;
    }
}
