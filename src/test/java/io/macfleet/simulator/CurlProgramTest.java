package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The simulated curl against a real HTTP server: exit codes, messages and files as curl 7.88.1 gave them for the same
 * requests to a small test server (captured 2026-11-24; macOS 26's curl 8 words these cases the same).
 */
class CurlProgramTest {

    private static final byte[] BODY = "0123456789abcdefghijklmnopqrstuvwxyz".repeat(1000).getBytes(StandardCharsets.US_ASCII);

    @TempDir
    Path state;
    private SimulatedFleet fleet;
    private MacShell shell;
    private HttpServer server;
    private String base;

    @BeforeEach
    void start() throws IOException {
        fleet = SimulatedFleet.builder(state.resolve("fleet")).macStudio("studio-01", 256, "26.2").build();
        shell = new MacShell(fleet, fleet.machine("studio-01"));
        Files.createDirectories(fleet.machine("studio-01").resolve("/tmp"));
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            try (exchange) {
                String path = exchange.getRequestURI().getPath();
                String range = exchange.getRequestHeaders().getFirst("Range");
                switch (path) {
                    case "/model", "/no-ranges" -> {
                        int from = range == null || path.equals("/no-ranges") ? 0 : Integer.parseInt(range.replaceAll("\\D", ""));
                        if (from > 0) {
                            exchange.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + (BODY.length - 1) + "/" + BODY.length);
                        }
                        exchange.sendResponseHeaders(from > 0 ? 206 : 200, BODY.length - from);
                        try (OutputStream out = exchange.getResponseBody()) {
                            out.write(BODY, from, BODY.length - from);
                        }
                    }
                    case "/moved" -> {
                        exchange.getResponseHeaders().add("Location", "/model");
                        exchange.sendResponseHeaders(302, -1);
                    }
                    default -> {
                        byte[] page = "not found".getBytes(StandardCharsets.US_ASCII);
                        exchange.sendResponseHeaders(404, page.length);
                        exchange.getResponseBody().write(page);
                    }
                }
            }
        });
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        server.stop(0);
        fleet.close();
    }

    private MacShell.Result curl(String arguments) {
        return shell.run("curl " + arguments, () -> "");
    }

    private Path onMac(String path) {
        return fleet.machine("studio-01").resolve(path);
    }

    @Test
    void downloadsResumesWithARangeAndFollowsRedirectsOnlyWithLocation() throws IOException {
        MacShell.Result whole = curl("--fail --silent --show-error --location -C - --output /tmp/m " + base + "/model");
        assertThat(whole.exitCode()).as(whole.stderr()).isZero();
        assertThat(onMac("/tmp/m")).hasBinaryContent(BODY);

        Files.write(onMac("/tmp/m"), Arrays.copyOf(BODY, 1000));
        MacShell.Result resumed = curl("-fsSL -C - -o /tmp/m " + base + "/model");
        assertThat(resumed.exitCode()).as(resumed.stderr()).isZero();
        assertThat(onMac("/tmp/m")).hasBinaryContent(BODY);

        assertThat(curl("-fsS -o /tmp/r " + base + "/moved").exitCode()).isZero();
        assertThat(onMac("/tmp/r")).isEmptyFile();
        assertThat(curl("-fsSL -o /tmp/r " + base + "/moved").exitCode()).isZero();
        assertThat(onMac("/tmp/r")).hasBinaryContent(BODY);
    }

    @Test
    void aResumeFromAServerWithoutRangesIsRefusedAndLeavesThePartialFile() throws IOException {
        Files.write(onMac("/tmp/m"), Arrays.copyOf(BODY, 500));
        MacShell.Result result = curl("--fail --silent --show-error -C - --output /tmp/m " + base + "/no-ranges");
        assertThat(result.exitCode()).isEqualTo(33);
        assertThat(result.stderr()).isEqualTo("curl: (33) HTTP server doesn't seem to support byte ranges. Cannot resume.\n");
        assertThat(onMac("/tmp/m")).hasBinaryContent(Arrays.copyOf(BODY, 500));
    }

    @Test
    void httpErrorsFailOnlyWithFailAndSilentHidesTheMessageUnlessShowError() throws IOException {
        MacShell.Result failed = curl("--fail --silent --show-error --output /tmp/x " + base + "/missing");
        assertThat(failed.exitCode()).isEqualTo(22);
        assertThat(failed.stderr()).isEqualTo("curl: (22) The requested URL returned error: 404\n");
        assertThat(onMac("/tmp/x")).doesNotExist();

        MacShell.Result quiet = curl("--fail --silent --output /tmp/x " + base + "/missing");
        assertThat(quiet.exitCode()).isEqualTo(22);
        assertThat(quiet.stderr()).isEmpty();

        MacShell.Result page = curl("--silent --output /tmp/x " + base + "/missing");
        assertThat(page.exitCode()).isZero();
        assertThat(Files.readString(onMac("/tmp/x"))).isEqualTo("not found");
    }

    @Test
    void usageAndConnectionErrorsAreCurls() throws IOException {
        MacShell.Result unknown = curl("--bogus " + base + "/model");
        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.stderr()).isEqualTo("curl: option --bogus: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n");
        MacShell.Result noUrl = curl("--fail --silent --show-error --output /tmp/x");
        assertThat(noUrl.exitCode()).isEqualTo(2);
        assertThat(noUrl.stderr()).startsWith("curl: no URL specified!\n");
        MacShell.Result noParameter = curl("-C");
        assertThat(noParameter.exitCode()).isEqualTo(2);
        assertThat(noParameter.stderr()).startsWith("curl: option -C: requires parameter\n");

        MacShell.Result unwritable = curl("--fail --silent --show-error --output /nonexistent/dir/o " + base + "/model");
        assertThat(unwritable.exitCode()).isEqualTo(23);
        assertThat(unwritable.stderr()).isEqualTo("curl: (23) Failure writing output to destination\n");

        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        MacShell.Result refused = curl("--fail --silent --show-error --output /tmp/x http://127.0.0.1:" + closedPort + "/model");
        assertThat(refused.exitCode()).isEqualTo(7);
        assertThat(refused.stderr()).matches("curl: \\(7\\) Failed to connect to 127\\.0\\.0\\.1 port " + closedPort
                + " after \\d+ ms: Couldn't connect to server\n");
    }
}
