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
        if (format == Format.MLX_JACCL) {
            refuseWithoutCoordinator(report, peers);
        }
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

    /**
     * mlx.launch refuses a jaccl hostfile whose rank 0 has no IP ("Rank 0 should have an IP reachable from all other
     * ranks", ml-explore/mlx python/mlx/_distributed_utils/launch.py:374-375): rank 0's first IP is the JACCL
     * coordinator. Refused even with --force, since the file would be unusable.
     */
    private static void refuseWithoutCoordinator(CablingReport report, PeerConfiguration peers) {
        if (report.machines().isEmpty()) {
            return;
        }
        String rankZero = report.machines().getFirst();
        if (peers.managementAddress(rankZero).isEmpty()) {
            throw new RefusedException("rank 0 (" + rankZero + ") of cluster " + report.cluster() + " has no known management address;"
                    + " mlx.launch needs rank 0's IP, reachable from every rank, as the JACCL coordinator (it rejects \"ips\": [] for rank 0)."
                    + " Offline: write it to " + rankZero + "/" + CaptureDirectory.ADDRESS + " in the capture directory (ipconfig getifaddr en0"
                    + " on that Mac); live: macfleet facts " + rankZero);
        }
    }

    private static void refuseUnlessFit(Format format, CablingReport report) {
        if (format == Format.MLX_RING) {
            if (report.ringOrder().isEmpty()) {
                throw new RefusedException("cluster " + report.cluster() + " has no Thunderbolt ring through all machines ("
                        + report.verdict() + "); fix the cabling or pass --force");
            }
            refuseErrors(report, report.findings().stream()
                    .filter(finding -> finding.severity() == Finding.Severity.ERROR && !RING_UNAFFECTED.contains(finding.code())).toList(),
                    " for the ring backend");
            return;
        }
        refuseErrors(report, report.findings().stream().filter(finding -> finding.severity() == Finding.Severity.ERROR).toList(), "");
    }

    /**
     * Errors the ring backend does not care about: it runs TCP over the Thunderbolt links of one ring, so RDMA's state,
     * a link slower than Thunderbolt 5 and the pairs a full mesh would add do not stop it. Everything else (a one-sided
     * cable, an active Thunderbolt Bridge, differing macOS versions, a machine without facts) does.
     */
    private static final java.util.Set<Finding.Code> RING_UNAFFECTED = java.util.EnumSet.of(Finding.Code.MISSING_LINK,
            Finding.Code.SLOW_LINK, Finding.Code.RDMA_INCAPABLE_PORT, Finding.Code.RDMA_DISABLED, Finding.Code.RDMA_STATUS_UNKNOWN,
            Finding.Code.NO_RDMA_DEVICE, Finding.Code.RDMA_PORT_DOWN);

    private static void refuseErrors(CablingReport report, List<Finding> errors, String forWhat) {
        if (errors.isEmpty()) {
            return;
        }
        String listed = errors.stream().map(Finding::message).limit(5).reduce((a, b) -> a + "; " + b).orElse("");
        throw new RefusedException("cluster " + report.cluster() + " fails the cabling check" + forWhat + " (" + errors.size()
                + " errors: " + listed + "); fix them (macfleet cabling check) or pass --force");
    }

    /**
     * The network configuration a generated file takes for granted and macfleet does not set up: for mlx-ring and
     * macfleet, one /30 point-to-point address pair per Thunderbolt link (the scheme of {@link PeerConfiguration}) with
     * the Thunderbolt Bridge off; for mlx-jaccl, each machine's management address (rank 0's is the coordinator).
     * Printed on standard error by {@code cabling config}, so standard output stays the file.
     */
    public static String networkAssumptions(Format format, CablingReport report, List<MachineCablingFacts> facts) {
        PeerConfiguration peers = PeerConfiguration.from(report, facts);
        StringBuilder text = new StringBuilder();
        if (format == Format.MLX_JACCL) {
            text.append("This hostfile assumes each machine is reachable at its management address (rank 0's is the JACCL coordinator):\n");
            for (String machine : report.machines()) {
                text.append("  ").append(machine).append(": ").append(peers.managementAddress(machine).orElse("(no address known)")).append('\n');
            }
            return text.toString();
        }
        List<String> order = format == Format.MLX_RING ? report.ringOrder().orElse(report.machines()) : report.machines();
        text.append("This ").append(format == Format.MLX_RING ? "hostfile" : "configuration")
                .append(" assumes these point-to-point addresses on the Thunderbolt links (one /").append(PeerConfiguration.PREFIX_LENGTH)
                .append(" per cable out of 192.168.0.0/16, the scheme mlx.distributed_config uses) and the Thunderbolt Bridge off.\n")
                .append("macfleet does not set them: on each machine, sudo ifconfig INTERFACE inet ADDRESS netmask ").append(PeerConfiguration.NETMASK)
                .append(" (or mlx.distributed_config --auto-setup, which assigns the same addresses).\n");
        java.util.Set<String> shown = new java.util.HashSet<>();
        for (int index = 0; index < order.size(); index++) {
            String machine = order.get(index);
            List<String> neighbours = format == Format.MLX_RING && order.size() > 1
                    ? List.of(order.get((index + 1) % order.size())) : order;
            for (String peer : neighbours) {
                for (PeerConfiguration.PeerLink link : peers.between(machine, peer)) {
                    if (!shown.add(machine + ":" + link.networkInterface())) {
                        continue;
                    }
                    PeerConfiguration.PeerLink back = peers.between(peer, machine).stream()
                            .filter(other -> other.localAddress().equals(link.peerAddress())).findFirst().orElseThrow();
                    shown.add(peer + ":" + back.networkInterface());
                    text.append("  ").append(machine).append(' ').append(link.networkInterface()).append(' ').append(link.localAddress())
                            .append("  <->  ").append(peer).append(' ').append(back.networkInterface()).append(' ').append(back.localAddress()).append('\n');
                }
            }
        }
        return text.toString();
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
