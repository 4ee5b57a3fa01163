package io.macfleet.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The simulator's own copy of what MLX's backends check when a rank starts (and how a ring hostfile reads), followed to
 * the letter from MLX's source, the one copy of these checks: the product's {@code runtime.MlxLaunchContract} only builds what
 * mlx.launch gives each rank, and the stand-in refuses what real MLX refuses even when the product gets that wrong
 * (tests of the runtime judge its plans with this class too).
 * Sources (ml-explore/mlx at 846d176, 2026-08-22):
 * <ul>
 * <li>{@code python/mlx/_distributed_utils/launch.py}: every rank gets the hostfile's envs and --env (133-141), each file
 * as {@code echo CONTENT >$(mktemp)} with the variable naming it (143-147: the file holds the text and a newline), then
 * {@code MLX_RANK} (150). jaccl (373-389): rank 0 must have an IP ("Rank 0 should have an IP reachable from all other
 * ranks", 374-375), every row of the device matrix has one entry per host and null on its own column ("Malformed
 * hostfile for jaccl backend", 378-381), {@code MLX_JACCL_COORDINATOR=<rank 0's first ip>:<starting port>} (383-386),
 * {@code MLX_JACCL_RING=1} for jaccl-ring (387-388), {@code MLX_IBV_DEVICES} = json.dumps of the rows (389). ring
 * (299-316): every host needs IPs (300-303), each ip gets {@code ip:port}, the port counting up from --starting-port over
 * hosts and ips (305-313), {@code MLX_HOSTFILE} = json.dumps of those lists, or "" for one host (314-316).
 * --starting-port defaults to 32323 (508-512).</li>
 * <li>{@code mlx/distributed/jaccl/lib/jaccl/jaccl.cpp}: the device file is a JSON array of arrays, one per rank, each of
 * the same length, entries null, a string or an array of strings (17-55); rank from JACCL_RANK/MLX_RANK, coordinator
 * from JACCL_COORDINATOR/MLX_JACCL_COORDINATOR, ring preference from JACCL_RING/MLX_JACCL_RING (226-237); valid when
 * 0 &lt;= rank &lt; size, a coordinator is set and the matrix is a mesh (every off-diagonal entry set, the diagonal
 * empty) or a ring (141-181). {@code rdma.cpp} create_connections: a device name the Mac does not list is "[jaccl]
 * Could not find device NAME (N available)" (285-320).</li>
 * <li>{@code mlx/distributed/ring/ring.cpp}: MLX_HOSTFILE and MLX_RANK both needed (825-839), the file a JSON array
 * of arrays of "ip:port" (load_nodes, 277-291; {@code utils.cpp} parse_address 50-61), rank below the size
 * (349-357); each rank accepts on its own addresses and connects to rank+1's (360-374).</li>
 * <li>{@code mlx/distributed/distributed.cpp} init("any") tries ring, then mpi, then jaccl (182-198): a jaccl rank must
 * not also have MLX_HOSTFILE set, or the ring backend would take it.</li>
 * </ul>
 */
public final class MlxRankStart {

    private static final ObjectMapper JSON = new ObjectMapper();

    private MlxRankStart() {
    }

    /** The "ip:port" lists of a ring hostfile, per rank. */
    public static List<List<String>> ringAddresses(String hostfile) {
        try {
            List<List<String>> hosts = new ArrayList<>();
            for (JsonNode host : JSON.readTree(hostfile)) {
                List<String> node = new ArrayList<>();
                host.forEach(address -> node.add(address.asText()));
                hosts.add(node);
            }
            return hosts;
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("not a ring hostfile: " + e.getMessage(), e);
        }
    }



    /**
     * What a rank's MLX would say when it starts with this environment: empty when mx.distributed.init() forms its group,
     * or MLX's own message when it would not. {@code files} reads a path of the Mac (empty when absent), {@code devices}
     * lists the RDMA devices of that Mac (ibv_devices). The checks follow the backends' code cited in the class comment.
     */
    public static Optional<String> check(Map<String, String> environment, java.util.function.Function<String, Optional<String>> files,
                                         List<String> devices) {
        String rankText = environment.get("MLX_RANK");
        String hostfile = environment.get("MLX_HOSTFILE");
        if (hostfile != null) {
            if (rankText == null) {
                return Optional.of("[ring] You need to provide via environment variables both a rank (MLX_RANK) and a hostfile (MLX_HOSTFILE) but"
                        + " provided MLX_RANK=\"\" and MLX_HOSTFILE=\"" + hostfile + "\"");
            }
            Optional<String> content = files.apply(hostfile);
            if (content.isEmpty()) {
                return Optional.of("[json.exception.parse_error.101] parse error at line 1, column 1: attempting to parse an empty input");
            }
            List<List<String>> nodes;
            try {
                nodes = ringAddresses(content.get());
            } catch (IllegalArgumentException e) {
                return Optional.of("[json.exception.parse_error.101] " + e.getMessage());
            }
            for (List<String> node : nodes) {
                for (String address : node) {
                    if (!address.contains(":")) {
                        return Optional.of("Can't parse address " + address);
                    }
                }
            }
            int rank = Integer.parseInt(rankText);
            if (rank > 0 && rank >= nodes.size()) {
                return Optional.of("[ring] Rank cannot be larger than the size of the group");
            }
            return Optional.empty();
        }
        String deviceFile = environment.getOrDefault("JACCL_IBV_DEVICES", environment.get("MLX_IBV_DEVICES"));
        String coordinator = environment.getOrDefault("JACCL_COORDINATOR", environment.get("MLX_JACCL_COORDINATOR"));
        String jacclRank = environment.getOrDefault("JACCL_RANK", rankText);
        String invalid = "[jaccl] You need to provide via environment variables a rank (JACCL_RANK/MLX_RANK), a device file (JACCL_IBV_DEVICES/"
                + "MLX_IBV_DEVICES) and a coordinator ip/port (JACCL_COORDINATOR/MLX_JACCL_COORDINATOR).";
        if (deviceFile == null || coordinator == null || coordinator.isEmpty()) {
            return Optional.of("[distributed] Couldn't initialize any backend (" + invalid + ")");
        }
        Optional<String> content = files.apply(deviceFile);
        if (content.isEmpty()) {
            return Optional.of("[json.exception.parse_error.101] parse error at line 1, column 1: attempting to parse an empty input");
        }
        JsonNode matrix;
        try {
            matrix = JSON.readTree(content.get());
        } catch (java.io.IOException e) {
            return Optional.of("[json.exception.parse_error.101] " + e.getMessage());
        }
        if (matrix == null || !matrix.isArray()) {
            return Optional.of("[jaccl] The device file should start with an array");
        }
        int size = matrix.size();
        List<List<List<String>>> devicesByRank = new ArrayList<>();
        for (int row = 0; row < size; row++) {
            JsonNode connections = matrix.get(row);
            if (!connections.isArray()) {
                return Optional.of("[jaccl] The device file should have an array of arrays");
            }
            if (connections.size() != size) {
                return Optional.of("[jaccl] The device file should contain the connectivity of each rank to all other ranks but rank " + row
                        + " contains only " + connections.size() + " entries.");
            }
            List<List<String>> names = new ArrayList<>();
            for (JsonNode entry : connections) {
                List<String> entryNames = new ArrayList<>();
                if (entry.isTextual()) {
                    entryNames.add(entry.asText());
                } else if (entry.isArray()) {
                    entry.forEach(name -> entryNames.add(name.asText()));
                } else if (!entry.isNull()) {
                    return Optional.of("[jaccl] Device names should be null, a string or array of strings.");
                }
                names.add(entryNames);
            }
            devicesByRank.add(names);
        }
        int rank = jacclRank == null ? 0 : parseLeadingInt(jacclRank);
        boolean mesh = size >= 2;
        for (int src = 0; src < size && mesh; src++) {
            for (int dst = 0; dst < size; dst++) {
                if ((src == dst) != devicesByRank.get(src).get(dst).isEmpty()) {
                    mesh = false;
                }
            }
        }
        boolean ringValid = size >= 2;
        if (ringValid) {
            int connections = devicesByRank.get(0).get(1).size();
            for (int src = 0; src < size; src++) {
                int left = (src + size - 1) % size;
                int right = (src + 1) % size;
                if (devicesByRank.get(src).get(left).size() != connections || devicesByRank.get(src).get(right).size() != connections) {
                    ringValid = false;
                }
            }
        }
        if (rank < 0 || rank >= size || !(mesh || ringValid)) {
            return Optional.of("[distributed] Couldn't initialize any backend (" + invalid + ")");
        }
        if (coordinator.indexOf(':') < 0) {
            return Optional.of("Can't parse address " + coordinator);
        }
        List<String> wanted = new ArrayList<>();
        boolean preferRing = environment.containsKey("JACCL_RING") || environment.containsKey("MLX_JACCL_RING");
        if (preferRing && ringValid || !mesh) {
            wanted.addAll(devicesByRank.get(rank).get((rank + size - 1) % size));
            wanted.addAll(devicesByRank.get(rank).get((rank + 1) % size));
        } else {
            for (int dst = 0; dst < size; dst++) {
                if (dst != rank) {
                    wanted.add(devicesByRank.get(rank).get(dst).getFirst());
                }
            }
        }
        for (String name : wanted) {
            if (!devices.contains(name)) {
                return Optional.of("[jaccl] Could not find device " + name + " (" + devices.size() + " available)");
            }
        }
        return Optional.empty();
    }

    /** C's atoi: the leading digits (with a sign), 0 when there are none. */
    private static int parseLeadingInt(String text) {
        java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("^\\s*([+-]?\\d+)").matcher(text);
        return matcher.find() ? Integer.parseInt(matcher.group(1)) : 0;
    }
}
