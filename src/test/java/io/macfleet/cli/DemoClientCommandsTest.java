package io.macfleet.cli;

import com.sun.net.httpserver.HttpServer;
import io.macfleet.command.ExitCodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo's client commands against a stand-in for a running demo's control API (a real HTTP server answering as the
 * simulator's resource does): a table for people, the answer as it came with {@code --json}, the API token sent as a
 * bearer token, and the daemon faults aimed at the inference node's LaunchDaemon unless {@code --daemon} says otherwise.
 */
class DemoClientCommandsTest {

    static final String MACHINES = "[{\"name\":\"studio-01\",\"address\":\"127.0.0.11\",\"sshPort\":2222,\"power\":\"on\",\"sshReachable\":true,"
            + "\"memoryGb\":512,\"macosVersion\":\"26.2\",\"rdmaEnabled\":true,\"thunderboltBridgeActive\":false,"
            + "\"faults\":{\"hang\":false,\"slowMillis\":0,\"crashLoopingDaemons\":[]}}]";

    @TempDir
    Path directory;
    HttpServer server;
    final List<String> requests = new CopyOnWriteArrayList<>();
    Path tokenFile;

    @BeforeEach
    void startControlApi() throws IOException {
        tokenFile = directory.resolve("api-token");
        Files.writeString(tokenFile, "demo-token-123\n");
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/api/v1/simulator/", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath() + " "
                    + exchange.getRequestHeaders().getFirst("Authorization") + " " + body);
            String path = exchange.getRequestURI().getPath();
            boolean refused = !"Bearer demo-token-123".equals(exchange.getRequestHeaders().getFirst("Authorization"));
            // What Quarkus answers for a missing or unknown bearer token, and the simulator's answer to entering Recovery.
            String answer = refused ? "{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401}"
                    : path.endsWith("/machines") ? MACHINES
                    : path.endsWith("/recovery") ? MACHINES.substring(1, MACHINES.length() - 1).replace("\"power\":\"on\"", "\"power\":\"recovery\"")
                    : "{\"result\":\"daemon killed\"}";
            byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", refused ? "application/problem+json" : "application/json");
            exchange.sendResponseHeaders(refused ? 401 : 200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Runs a client command and returns what it printed on standard output (where the clients print). */
    String run(Object command, String... arguments) {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            int exit = PlainCommandLine.configure(new CommandLine(command)).execute(arguments);
            assertThat(exit).as(captured.toString(StandardCharsets.UTF_8)).isZero();
        } finally {
            System.setOut(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Test
    void machinesIsATableForPeopleAndTheAnswerAsItCameWithJson() {
        String table = run(new DemoCommand.Machines(), "--url", url(), "--token-file", tokenFile.toString());
        assertThat(table.lines().toList()).containsExactly(
                "machine      ssh                   power     macOS  RDMA  bridge memory  faults",
                "studio-01    127.0.0.11:2222       on        26.2   on    off     512 GB -");

        String json = run(new DemoCommand.Machines(), "--url", url(), "--token-file", tokenFile.toString(), "--json");
        assertThat(json.strip()).isEqualTo(MACHINES);
        assertThat(requests).allSatisfy(request -> assertThat(request).startsWith("GET /api/v1/simulator/machines Bearer demo-token-123"));
    }

    @Test
    void daemonFaultsHitTheInferenceNodeUnlessToldOtherwise() {
        run(new DemoCommand.Fault(), "--url", url(), "--token-file", tokenFile.toString(), "studio-02", "daemon-crash");
        run(new DemoCommand.Fault(), "--url", url(), "--token-file", tokenFile.toString(), "studio-02", "crash-loop", "--daemon", "com.example.other");
        run(new DemoCommand.Fault(), "--url", url(), "--token-file", tokenFile.toString(), "studio-02", "hang");

        assertThat(requests).hasSize(3);
        assertThat(requests.get(0)).startsWith("POST /api/v1/simulator/faults Bearer demo-token-123")
                .contains("\"fault\":\"daemon-crash\"", "\"daemon\":\"io.macfleet.inference-node\"");
        assertThat(requests.get(1)).contains("\"fault\":\"crash-loop\"", "\"daemon\":\"com.example.other\"");
        assertThat(requests.get(2)).contains("\"fault\":\"hang\"").doesNotContain("inference-node");
    }

    @Test
    void theTokenIsReadFromTheDemosDirectoryWhichFollowsMacfleetHome() throws IOException {
        assertThat(DemoCommand.defaultDirectory(Map.of("MACFLEET_HOME", "/srv/fleet"), "/home/olga")).isEqualTo(Path.of("/srv/fleet"));
        assertThat(DemoCommand.defaultDirectory(Map.of(), "/home/olga")).isEqualTo(Path.of("/home/olga/.macfleet/demo"));

        Path demo = Files.createDirectories(directory.resolve("other-demo"));
        Files.writeString(demo.resolve("api-token"), "demo-token-123\n");
        run(new DemoCommand.Machines(), "--url", url(), "--dir", demo.toString());
        assertThat(requests).singleElement().satisfies(request -> assertThat(request).startsWith("GET /api/v1/simulator/machines Bearer demo-token-123"));
    }

    @Test
    void aRefusedTokenIsASentenceNamingTheTokenNotTheProblemDocument() throws IOException {
        Path stale = directory.resolve("stale-token");
        Files.writeString(stale, "from-an-earlier-start\n");
        Result refused = runFailing(new DemoCommand.Machines(), "--url", url(), "--token-file", stale.toString());
        assertThat(refused.exit()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.error().strip()).isEqualTo("macfleet demo: the demo did not accept the token in " + stale
                + "; a demo writes a fresh api-token in its directory at each start (give --dir, --token-file or MACFLEET_API_TOKEN) (HTTP 401)");

        Result missing = runFailing(new DemoCommand.Machines(), "--url", url(), "--dir", directory.resolve("no-demo-here").toString());
        assertThat(missing.error()).contains("the demo wants an API token and none was sent: " + directory.resolve("no-demo-here").resolve("api-token")
                + " cannot be read (no such file)").doesNotContain("{");

        // Scripts that asked for JSON get the problem document as it came.
        Result scripted = runFailing(new DemoCommand.Machines(), "--url", url(), "--token-file", stale.toString(), "--json");
        assertThat(scripted.error().strip()).startsWith("{").contains("\"status\":401");
    }

    @Test
    void enteringRecoveryIsASentence() {
        String entered = run(new DemoCommand.Recovery(), "--url", url(), "--token-file", tokenFile.toString(), "--enter", "studio-01");
        assertThat(entered.strip()).isEqualTo("studio-01 is in macOS Recovery (power: recovery); type into its Terminal with: "
                + "macfleet demo recovery studio-01 \"rdma_ctl enable\"");
    }

    record Result(int exit, String error) {
    }

    Result runFailing(Object command, String... arguments) {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            return new Result(PlainCommandLine.configure(new CommandLine(command)).execute(arguments), captured.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }

    @Test
    void noRunningDemoIsNamedWithItsAddressAndWhy() {
        String stopped = url();
        server.stop(0);
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        int exit;
        try {
            exit = PlainCommandLine.configure(new CommandLine(new DemoCommand.Machines())).execute("--url", stopped, "--token-file", tokenFile.toString());
        } finally {
            System.setErr(original);
        }
        String message = captured.toString(StandardCharsets.UTF_8);
        assertThat(exit).isEqualTo(ExitCodes.USAGE);
        // The connection's failure has no message of its own: the line names its kind rather than ending in "null".
        assertThat(message).startsWith("macfleet demo: no running demo at " + stopped + " (start one with `macfleet demo`")
                .contains("MACFLEET_HTTP_PORT", "ConnectException").doesNotContain("null");
    }
}
