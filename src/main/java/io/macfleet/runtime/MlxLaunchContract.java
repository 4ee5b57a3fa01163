package io.macfleet.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code mlx.launch} gives each rank, followed to the letter. What MLX's backends then check when a rank starts is
 * the simulator's to know ({@code simulator.MlxRankStart}, written from the same source): the product builds the launch,
 * the stand-in for MLX judges it, so a misreading here is caught there rather than agreed with.
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
public final class MlxLaunchContract {

    private static final ObjectMapper JSON = new ObjectMapper();

    private MlxLaunchContract() {
    }

    /** launch.py:383-389 and 150: the variables of one jaccl rank (the device file's path is where the deployment writes it). */
    public static Map<String, String> jacclEnvironment(int rank, String rankZeroAddress, int startingPort, String deviceFile, boolean ring) {
        if (rankZeroAddress == null || rankZeroAddress.isBlank()) {
            throw new RuntimeRefused("Rank 0 should have an IP reachable from all other ranks (mlx.launch refuses a jaccl hostfile without one)");
        }
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put("MLX_JACCL_COORDINATOR", rankZeroAddress + ":" + startingPort);
        if (ring) {
            environment.put("MLX_JACCL_RING", "1");
        }
        environment.put("MLX_IBV_DEVICES", deviceFile);
        environment.put("MLX_RANK", Integer.toString(rank));
        return environment;
    }

    /** launch.py:316 and 150. */
    public static Map<String, String> ringEnvironment(int rank, String hostfile) {
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put("MLX_HOSTFILE", hostfile);
        environment.put("MLX_RANK", Integer.toString(rank));
        return environment;
    }

    /** launch.py:389 and 146: json.dumps of the rows (Python's separators), then echo's newline. */
    public static String deviceFile(List<List<String>> matrix) {
        int size = matrix.size();
        for (int rank = 0; rank < size; rank++) {
            if (matrix.get(rank).size() != size || matrix.get(rank).get(rank) != null) {
                throw new RuntimeRefused("Malformed hostfile for jaccl backend: row " + rank + " of the device matrix " + matrix
                        + " needs " + size + " entries with null in column " + rank);
            }
        }
        return pythonJson(matrix) + "\n";
    }

    /** launch.py:305-314 and 146: each ip with its port, counting up over hosts and ips; "" for a single host. */
    public static String ringHostfile(List<List<String>> ips, int startingPort) {
        int port = startingPort;
        List<List<String>> hosts = new ArrayList<>();
        for (List<String> host : ips) {
            if (host.isEmpty()) {
                throw new RuntimeRefused("The ring backend requires IPs to be provided instead of hostnames");
            }
            List<String> node = new ArrayList<>();
            for (String ip : host) {
                node.add(ip + ":" + port++);
            }
            hosts.add(node);
        }
        return (hosts.size() > 1 ? pythonJson(hosts) : "") + "\n";
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

    /** json.dumps with its default separators (", " and ": "), as mlx.launch writes the files. */
    static String pythonJson(List<? extends List<String>> rows) {
        StringBuilder text = new StringBuilder("[");
        for (int row = 0; row < rows.size(); row++) {
            text.append(row == 0 ? "" : ", ").append('[');
            List<String> entries = rows.get(row);
            for (int column = 0; column < entries.size(); column++) {
                String entry = entries.get(column);
                text.append(column == 0 ? "" : ", ").append(entry == null ? "null" : "\"" + entry.replace("\\", "\\\\").replace("\"", "\\\"") + "\"");
            }
            text.append(']');
        }
        return text.append(']').toString();
    }
}
