package io.macfleet.simulator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a simulated Mac's {@code VENV/bin/python3 -m mlx_lm.server ...} runs (a JVM of this host, started by the
 * simulated launchd with the daemon's environment): the launch contract checked as MLX checks it
 * ({@link MlxRankStart#check}, with this Mac's RDMA devices), refused with MLX's own message and exit status 1
 * when wrong; then the group formed over real sockets (JACCL: every rank connects to the coordinator on rank 0's
 * address; ring: each rank accepts on its own hostfile address and connects to the next rank's), and rank 0 alone
 * serves HTTP (mlx_lm/server.py:1714-1717) with a labelled stand-in answer, since there is no MLX off Apple silicon.
 * A peer that goes away ends the rank, as a failed collective ends an MLX rank.
 */
public final class MlxServerStandIn {

    static final String LABEL = "simulated mlx_lm.server stand-in (no MLX off Apple silicon)";

    private MlxServerStandIn() {
    }

    /** The system property naming, on the Mac, the virtual environment whose python3 started this stand-in. */
    static final String VENV_PROPERTY = "macfleet.mlx.venv";
    /** Where a venv sits on a Mac when the script does not say (macfleet's MLX home, as seen on the Mac's disk). */
    private static final String DEFAULT_VENV = "/usr/local/macfleet/mlx/venv";

    public static void main(String[] arguments) throws Exception {
        Map<String, String> environment = System.getenv();
        Path root = Path.of(environment.getOrDefault("MACFLEET_SIMULATED_ROOT", "/"));
        List<String> words = List.of(arguments);
        if (words.size() < 2 || !words.get(0).equals("-m") || !words.get(1).equals("mlx_lm.server")) {
            System.err.println("python3: the simulator's venv runs -m mlx_lm.server only");
            System.exit(2);
        }
        String host = option(words, "--host").orElse("127.0.0.1");
        int port = Integer.parseInt(option(words, "--port").orElse("8080"));
        String model = option(words, "--model").orElse("");
        List<String> devices = devices(root, environment);
        Optional<String> refused = MlxRankStart.check(environment, path -> read(root, path), devices);
        if (refused.isPresent()) {
            System.err.println("Traceback (most recent call last):\n  File \"mlx_lm/server.py\", line 284, in __init__\n"
                    + "RuntimeError: " + refused.get());
            System.exit(1);
        }
        // The simulated launchd points arguments naming directories of the Mac into its file system already.
        Path modelDirectory = Files.isDirectory(Path.of(model)) ? Path.of(model) : inside(root, model);
        if (!Files.isRegularFile(modelDirectory.resolve("config.json"))) {
            System.err.println("FileNotFoundError: [Errno 2] No such file or directory: '" + model + "/config.json'");
            System.exit(1);
        }
        int rank = Integer.parseInt(environment.get("MLX_RANK").strip());
        List<Socket> peers = environment.containsKey("MLX_HOSTFILE") ? ring(root, environment, rank) : jaccl(root, environment, rank);
        for (Socket peer : peers) {
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (peer.getInputStream().read() >= 0) {
                        // Nothing is sent: the connection stands for the group.
                    }
                } catch (IOException e) {
                    // Ends below.
                }
                System.err.println("[jaccl] Recv failed with errno 54 (a peer of rank " + rank + " went away)");
                System.exit(1);
            });
        }
        System.err.println("rank " + rank + " of " + (peers.size() + (rank == 0 ? 1 : 0)) + ": group formed (" + LABEL + ")");
        if (rank != 0) {
            Thread.currentThread().join();
        }
        serve(host, port, model, engine(modelDirectory));
    }

    /** The system property naming the bundled inference node's jar on this host (set by the venv's script when it exists). */
    static final String NODE_JAR_PROPERTY = "macfleet.node.jar";
    /** A GGUF file in the model directory that the bundled engine serves in MLX's place (e.g. the demo's tiny model). */
    static final String STAND_IN_MODEL = "macfleet-stand-in.gguf";

    /**
     * With a {@value #STAND_IN_MODEL} in the model directory and the node's jar known, rank 0 starts the bundled engine on
     * it (a child process on a free loopback port, which ends with this process: --exit-with-stdin) and waits until it
     * serves; its base URL, or empty (then the answers are canned, and say so).
     */
    private static Optional<URI> engine(Path modelDirectory) throws Exception {
        Path gguf = modelDirectory.resolve(STAND_IN_MODEL);
        String jar = System.getProperty(NODE_JAR_PROPERTY, "");
        if (!Files.isRegularFile(gguf) || jar.isEmpty() || !Files.isRegularFile(Path.of(jar)) || !"0".equals(System.getenv("MLX_RANK").strip())) {
            return Optional.empty();
        }
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Process node = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--add-modules", "jdk.incubator.vector",
                "-Xmx256m", "-jar", jar, "serve", "--model", gguf.toString(), "--host", "127.0.0.1", "--port", Integer.toString(port), "--threads", "1",
                "--exit-with-stdin", "true").redirectOutput(ProcessBuilder.Redirect.INHERIT).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Runtime.getRuntime().addShutdownHook(new Thread(node::destroy));
        URI base = URI.create("http://127.0.0.1:" + port);
        try (HttpClient client = HttpClient.newHttpClient()) {
            for (int attempt = 0; attempt < 600 && node.isAlive(); attempt++) {
                try {
                    if (client.send(HttpRequest.newBuilder(base.resolve("/health")).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                        System.err.println("stand-in: the bundled engine serves " + STAND_IN_MODEL + " in mlx_lm's place (" + LABEL + ")");
                        return Optional.of(base);
                    }
                } catch (IOException starting) {
                    // Not listening yet.
                }
                Thread.sleep(200);
            }
        }
        System.err.println("stand-in: the bundled engine did not serve " + gguf + " (exit " + (node.isAlive() ? "none" : node.exitValue()) + ")");
        System.exit(1);
        return Optional.empty();
    }

    private static void serve(String host, int port, String model, Optional<URI> engine) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(host), port), 16);
        if (engine.isPresent()) {
            HttpClient client = HttpClient.newHttpClient();
            for (String path : List.of("/v1/chat/completions", "/v1/completions")) {
                server.createContext(path, exchange -> {
                    byte[] body = exchange.getRequestBody().readAllBytes();
                    try {
                        HttpResponse<String> answer = client.send(HttpRequest.newBuilder(engine.get().resolve(path)).timeout(Duration.ofSeconds(120))
                                .header("Content-Type", "application/json").method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body))
                                .build(), HttpResponse.BodyHandlers.ofString());
                        String text = answer.body().strip();
                        // Labelled in every answer: the tokens come from the bundled engine, not from MLX.
                        exchange.getResponseHeaders().set("X-Macfleet-Stand-In", LABEL + "; bundled engine on " + STAND_IN_MODEL);
                        answer(exchange, answer.statusCode(), text.startsWith("{") ? "{\"macfleet_stand_in\": \"" + json(LABEL + "; bundled engine on "
                                + STAND_IN_MODEL) + "\", " + text.substring(1) : text);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        answer(exchange, 503, "{\"error\": \"interrupted\"}");
                    }
                });
            }
        }
        server.createContext("/v1/models", exchange -> answer(exchange, 200, "{\"object\": \"list\", \"data\": [{\"id\": \"" + json(model)
                + "\", \"object\": \"model\", \"created\": 0, \"owned_by\": \"" + LABEL + "\"}]}"));
        server.createContext(engine.isPresent() ? "/v1/canned" : "/v1/chat/completions", exchange -> {
            if (!exchange.getRequestMethod().equals("POST")) {
                answer(exchange, 405, "{\"error\": \"POST only\"}");
                return;
            }
            exchange.getRequestBody().readAllBytes();
            answer(exchange, 200, "{\"id\": \"chatcmpl-standin\", \"object\": \"chat.completion\", \"model\": \"" + json(model)
                    + "\", \"choices\": [{\"index\": 0, \"finish_reason\": \"stop\", \"message\": {\"role\": \"assistant\", \"content\": \"["
                    + LABEL + "] the launch contract held on every rank\"}}], \"usage\": {\"prompt_tokens\": 0, \"completion_tokens\": 0, \"total_tokens\": 0}}");
        });
        server.start();
        // mlx_lm/server.py:1696.
        System.err.println("INFO - Starting httpd at " + host + " on port " + port + "...");
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** JACCL's side channel: rank 0 accepts every other rank on the coordinator address; the others connect there. */
    private static List<Socket> jaccl(Path root, Map<String, String> environment, int rank) throws Exception {
        String coordinator = environment.getOrDefault("JACCL_COORDINATOR", environment.get("MLX_JACCL_COORDINATOR"));
        String host = coordinator.substring(0, coordinator.lastIndexOf(':'));
        int port = Integer.parseInt(coordinator.substring(coordinator.lastIndexOf(':') + 1));
        int size = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                read(root, environment.getOrDefault("JACCL_IBV_DEVICES", environment.get("MLX_IBV_DEVICES"))).orElseThrow()).size();
        List<Socket> peers = new ArrayList<>();
        if (rank == 0) {
            try (ServerSocket server = new ServerSocket(port, size, InetAddress.getByName(host))) {
                while (peers.size() < size - 1) {
                    peers.add(server.accept());
                }
            }
            return peers;
        }
        peers.add(connect(host, port, "[jaccl]"));
        return peers;
    }

    /** ring.cpp:360-374: accept on this rank's own addresses, connect to the next rank's. */
    private static List<Socket> ring(Path root, Map<String, String> environment, int rank) throws Exception {
        List<List<String>> nodes = MlxRankStart.ringAddresses(read(root, environment.get("MLX_HOSTFILE")).orElseThrow());
        if (nodes.size() < 2) {
            return List.of();
        }
        String own = nodes.get(rank).getFirst();
        String next = nodes.get((rank + 1) % nodes.size()).getFirst();
        List<Socket> peers = new ArrayList<>();
        try (ServerSocket server = new ServerSocket(Integer.parseInt(own.substring(own.lastIndexOf(':') + 1)), 2,
                InetAddress.getByName(own.substring(0, own.lastIndexOf(':'))))) {
            Thread connector = Thread.ofPlatform().start(() -> {
                try {
                    synchronized (peers) {
                        peers.add(connect(next.substring(0, next.lastIndexOf(':')), Integer.parseInt(next.substring(next.lastIndexOf(':') + 1)), "[ring]"));
                    }
                } catch (Exception e) {
                    System.err.println(e.getMessage());
                    System.exit(1);
                }
            });
            Socket left = server.accept();
            connector.join();
            synchronized (peers) {
                peers.add(left);
            }
        }
        return peers;
    }

    private static Socket connect(String host, int port, String tag) throws Exception {
        for (int attempt = 0; attempt < 600; attempt++) {
            try {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress(InetAddress.getByName(host), port), 1000);
                return socket;
            } catch (IOException e) {
                Thread.sleep(200);
            }
        }
        throw new IOException(tag + " Couldn't connect (error: 61) to " + host + ":" + port);
    }

    private static List<String> devices(Path root, Map<String, String> environment) {
        // The venv this python3 belongs to (its path on the Mac, which the venv's script passes), where pip noted the devices.
        Path file = inside(root, System.getProperty(VENV_PROPERTY, DEFAULT_VENV) + "/" + MlxPythonProgram.DEVICES_FILE);
        try {
            return Files.readAllLines(file).stream().filter(line -> !line.isBlank()).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static Optional<String> read(Path root, String path) {
        if (path == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Files.readString(inside(root, path)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Path inside(Path root, String path) {
        return root.resolve(path.startsWith("/") ? path.substring(1) : path).normalize();
    }

    private static Optional<String> option(List<String> words, String name) {
        int index = words.indexOf(name);
        return index >= 0 && index + 1 < words.size() ? Optional.of(words.get(index + 1)) : Optional.empty();
    }

    private static String json(String text) {
        return text.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
