package io.macfleet.node.cluster;

import io.macfleet.node.json.Json;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A cluster file ({@code schemas/node-cluster.schema.json}): the ranks, where each listens, how to reach each peer
 * (over a Thunderbolt link's point-to-point address when the file gives one), the parallelism and each rank's
 * weight (its share of the model; default equal).
 */
public record ClusterFile(String name, String transport, Parallelism parallelism, List<Rank> ranks) {
    /** Cluster port when the file gives none: TCP for the mesh, UDP (same number) for heartbeats. */
    public static final int DEFAULT_CLUSTER_PORT = 52600;

    /** How the model is split across the ranks. */
    public enum Parallelism {
        TENSOR, PIPELINE;

        static Parallelism parse(String value, String where) {
            return switch (value) {
                case "tensor" -> TENSOR;
                case "pipeline" -> PIPELINE;
                default -> throw new IllegalArgumentException(where + ": parallelism must be tensor or pipeline, got '"
                        + value + "'");
            };
        }

        public String label() {
            return name().toLowerCase();
        }
    }

    /** One rank: its management address, cluster (mesh) port, HTTP port, weight and links to peers. */
    public record Rank(int rank, String machine, String address, int clusterPort, int httpPort, double weight,
                       List<Peer> peers) {
    }

    /** A direct link to a peer: the peer's address on that link, and this rank's own (null when the file gives none). */
    public record Peer(int rank, String peerAddress, String localAddress) {
    }

    public static ClusterFile read(Path path) throws IOException {
        String text;
        try {
            text = Files.readString(path);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IllegalArgumentException("cluster file " + path + " does not exist");
        }
        try {
            return parse(text, path.toString());
        } catch (Json.JsonException e) {
            throw new IllegalArgumentException("cluster file " + path + ": " + e.getMessage());
        }
    }

    public static ClusterFile parse(String text, String where) {
        if (!(Json.parse(text) instanceof Map<?, ?> root)) {
            throw new IllegalArgumentException(where + ": the cluster file must be a JSON object");
        }
        String name = string(root, "cluster", where, null);
        String transport = string(root, "transport", where, "tcp");
        if (!transport.equals("tcp") && !transport.equals("rdma")) {
            throw new IllegalArgumentException(where + ": transport must be tcp or rdma, got '" + transport + "'");
        }
        Parallelism parallelism = Parallelism.parse(string(root, "parallelism", where, "tensor"), where);
        if (!(root.get("ranks") instanceof List<?> list) || list.isEmpty()) {
            throw new IllegalArgumentException(where + ": 'ranks' must be a non-empty array");
        }
        Rank[] ranks = new Rank[list.size()];
        for (int i = 0; i < list.size(); i++) {
            String at = where + ": ranks[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> entry)) {
                throw new IllegalArgumentException(at + " must be an object");
            }
            int rank = (int) integer(entry, "rank", at, -1);
            if (rank < 0 || rank >= ranks.length) {
                throw new IllegalArgumentException(at + ".rank must be 0.." + (ranks.length - 1) + ", got " + rank);
            }
            if (ranks[rank] != null) {
                throw new IllegalArgumentException(at + ": rank " + rank + " appears twice");
            }
            double weight = entry.get("weight") == null ? 1.0 : number(entry, "weight", at);
            if (!(weight > 0)) {
                throw new IllegalArgumentException(at + ".weight must be positive, got " + weight);
            }
            List<Peer> peers = new ArrayList<>();
            if (entry.get("peers") instanceof List<?> peerList) {
                for (int p = 0; p < peerList.size(); p++) {
                    if (peerList.get(p) instanceof Map<?, ?> peer) {
                        peers.add(new Peer((int) integer(peer, "rank", at + ".peers[" + p + "]", -1),
                                string(peer, "peerAddress", at + ".peers[" + p + "]", null),
                                peer.get("localAddress") == null ? null : string(peer, "localAddress", at + ".peers[" + p + "]", null)));
                    }
                }
            }
            int clusterPort = (int) integer(entry, "clusterPort", at, DEFAULT_CLUSTER_PORT);
            int httpPort = (int) integer(entry, "httpPort", at, 8080);
            ranks[rank] = new Rank(rank, string(entry, "machine", at, "rank-" + rank),
                    string(entry, "address", at, "127.0.0.1"), clusterPort, httpPort, weight, List.copyOf(peers));
        }
        return new ClusterFile(name, transport, parallelism, List.of(ranks));
    }

    public int size() {
        return ranks.size();
    }

    public Rank rank(int rank) {
        if (rank < 0 || rank >= ranks.size()) {
            throw new IllegalArgumentException("--rank " + rank + " is not in the cluster file (ranks 0.."
                    + (ranks.size() - 1) + ")");
        }
        return ranks.get(rank);
    }

    public double[] weights() {
        return ranks.stream().mapToDouble(Rank::weight).toArray();
    }

    /** The address rank {@code from} uses to reach rank {@code to}: the link address if cabled, else the management one. */
    public String addressOf(int from, int to) {
        for (Peer peer : rank(from).peers()) {
            if (peer.rank() == to && peer.peerAddress() != null) {
                return peer.peerAddress();
            }
        }
        return rank(to).address();
    }

    /**
     * Every address the file says {@code rank} is reached at: its management address, its own end of each link, and
     * the address each peer uses for it. The rank's mesh (TCP) and heartbeats (UDP) listen on these and nowhere else,
     * and a peer's connections and heartbeats are accepted only from the peer's addresses.
     */
    public java.util.Set<String> addressesOf(int rank) {
        java.util.Set<String> addresses = new java.util.LinkedHashSet<>();
        addresses.add(rank(rank).address());
        for (Peer peer : rank(rank).peers()) {
            if (peer.localAddress() != null) {
                addresses.add(peer.localAddress());
            }
        }
        for (int other = 0; other < size(); other++) {
            if (other != rank) {
                addresses.add(addressOf(other, rank));
            }
        }
        return addresses;
    }

    /**
     * The address rank {@code from} sends from to reach rank {@code to}: its own end of their link when the file
     * names it, else its management address (so the peer sees an address it expects).
     */
    public String sourceAddress(int from, int to) {
        for (Peer peer : rank(from).peers()) {
            if (peer.rank() == to && peer.peerAddress() != null && peer.localAddress() != null) {
                return peer.localAddress();
            }
        }
        return rank(from).address();
    }

    /** A loopback cluster of {@code size} ranks on the given ports (launch-local). */
    public static String loopback(int size, Parallelism parallelism, int[] clusterPorts, int[] httpPorts) {
        List<Object> ranks = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            ranks.add(Map.of("rank", r, "machine", "localhost", "address", "127.0.0.1", "clusterPort", clusterPorts[r],
                    "httpPort", httpPorts[r], "peers", List.of()));
        }
        return Json.write(Map.of("cluster", "local", "transport", "tcp", "parallelism", parallelism.label(),
                "ranks", ranks));
    }

    private static String string(Map<?, ?> map, String key, String where, String fallback) {
        Object value = map.get(key);
        if (value == null && fallback != null) {
            return fallback;
        }
        if (!(value instanceof String s) || s.isEmpty()) {
            throw new IllegalArgumentException(where + ": '" + key + "' must be a non-empty string");
        }
        return s;
    }

    private static long integer(Map<?, ?> map, String key, String where, long fallback) {
        Object value = map.get(key);
        if (value == null && fallback >= 0) {
            return fallback;
        }
        if (!(value instanceof Long l)) {
            throw new IllegalArgumentException(where + ": '" + key + "' must be an integer");
        }
        return l;
    }

    private static double number(Map<?, ?> map, String key, String where) {
        if (!(map.get(key) instanceof Number n)) {
            throw new IllegalArgumentException(where + ": '" + key + "' must be a number");
        }
        return n.doubleValue();
    }
}
