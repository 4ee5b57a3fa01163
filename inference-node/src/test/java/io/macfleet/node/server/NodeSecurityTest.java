package io.macfleet.node.server;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The API's transport guards (issue 29): a bearer key from a file reference, 401 without it, /health open; a 16 MB
 * body refused from its header; prompt text bounded before tokenizing; worded errors; and, in a process of its
 * own, the request timeout and the model's SHA-256 check.
 */
class NodeSecurityTest {
    private static final String KEY = "k3y-for-the-node-security-test-0123456789";
    private static NodeServer server;
    private static HttpClient client;
    private static Path directory;

    @BeforeAll
    static void start() throws Exception {
        directory = Files.createTempDirectory("node-security");
        Path keyFile = directory.resolve("api.key");
        Files.writeString(keyFile, KEY + "\n");
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
        NodeConfig config = new NodeConfig(TestModels.tiny(GgmlType.Q8_0), "127.0.0.1", 0, 64, 1, 4, "tiny", 8);
        server = new NodeServer(config, null, NodeSecurity.of("file:" + keyFile, null));
        server.start();
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (request("/health", null, null).statusCode() != 200) {
            assertThat(System.nanoTime()).as("model loads in time").isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> request(String path, String key, String body) throws Exception {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.address().getPort() + path))
                .timeout(Duration.ofSeconds(30));
        if (key != null) {
            builder.header("Authorization", "Bearer " + key);
        }
        builder = body == null ? builder.GET() : builder.header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        return client.send(builder.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @SuppressWarnings("unchecked")
    void anonymousAndWrongKeysGet401AndHealthStaysOpen() throws Exception {
        String completion = "{\"prompt\":\"Hi\",\"max_tokens\":1}";
        int anonymous = 0, refused = 0;
        for (String path : List.of("/v1/models", "/v1/completions", "/v1/chat/completions", "/v1/unknown")) {
            for (String key : Arrays.asList(null, "wrong", KEY.substring(1))) {
                HttpResponse<String> answer = request(path, key, path.endsWith("models") ? null : completion);
                anonymous++;
                refused += answer.statusCode() == 401 ? 1 : 0;
                assertThat(answer.statusCode()).as(path + " with key " + key).isEqualTo(401);
                Map<String, Object> error = (Map<String, Object>) ((Map<String, Object>) Json.parse(answer.body())).get("error");
                assertThat(error.get("code")).isEqualTo("invalid_api_key");
                assertThat(answer.headers().firstValue("WWW-Authenticate")).contains("Bearer");
            }
        }
        System.out.printf("requests without the right API key answered 401: %d of %d%n", refused, anonymous);
        assertThat(request("/v1/models", KEY, null).statusCode()).isEqualTo(200);
        assertThat(request("/v1/completions", KEY, completion).statusCode()).isEqualTo(200);
        HttpResponse<String> health = request("/health", null, null);
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).doesNotContain(KEY).doesNotContain("api.key");
    }

    @Test
    void metricsNeedTheKeyAndCountRefusalsByKind() throws Exception {
        assertThat(request("/metrics", null, null).statusCode()).isEqualTo(401);
        assertThat(request("/metrics", "wrong", null).statusCode()).isEqualTo(401);
        request("/v1/models", "wrong", null);
        assertThat(request("/v1/completions", KEY, "{\"prompt\":\"Hi\",\"max_tokens\":1}").statusCode()).isEqualTo(200);
        HttpResponse<String> metrics = request("/metrics", KEY, null);
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).containsPattern("(?m)^inference_node_errors_total\\{kind=\"invalid_api_key\"\\} [1-9]")
                .contains("# TYPE inference_node_time_to_first_token_seconds histogram")
                .containsPattern("(?m)^inference_node_time_to_first_token_seconds_bucket\\{le=\"\\+Inf\"\\} [1-9]")
                .contains("inference_node_requests_waiting 0");
    }

    @Test
    void a16MegabyteBodyIsRefusedFromItsHeaderWithoutReadingIt() throws Exception {
        List<Double> millis = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", server.address().getPort()), 5000);
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                long start = System.nanoTime();
                out.write(("POST /v1/completions HTTP/1.1\r\nHost: node\r\nAuthorization: Bearer " + KEY
                        + "\r\nContent-Type: application/json\r\nContent-Length: " + (16 << 20) + "\r\n\r\n{\"prompt\":\"")
                        .getBytes(StandardCharsets.US_ASCII));
                out.write(new byte[64 * 1024]); // the first of 16 MB; the rest is never sent
                out.flush();
                String status = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
                millis.add((System.nanoTime() - start) / 1e6);
                assertThat(status).isEqualTo("HTTP/1.1 413");
            }
        }
        millis.sort(Double::compare);
        System.out.printf("16 MB body refused in %.1f ms (median of 5; all %s)%n", millis.get(2), millis);
        assertThat(millis.get(2)).as("milliseconds to refuse a 16 MB body").isLessThan(100);
    }

    @Test
    @SuppressWarnings("unchecked")
    void promptTextIsBoundedBeforeTokenizing() throws Exception {
        String big = "word ".repeat(40_000); // 200 KB, for a context of 64 tokens
        long start = System.nanoTime();
        HttpResponse<String> answer = request("/v1/completions", KEY, Json.write(Map.of("prompt", big, "max_tokens", 1)));
        double seconds = (System.nanoTime() - start) / 1e9;
        assertThat(answer.statusCode()).isEqualTo(400);
        Map<String, Object> error = (Map<String, Object>) ((Map<String, Object>) Json.parse(answer.body())).get("error");
        assertThat(error.get("code")).isEqualTo("context_length_exceeded");
        assertThat((String) error.get("message")).contains("200000 bytes");
        assertThat(seconds).isLessThan(2);
        HttpResponse<String> chat = request("/v1/chat/completions", KEY, Json.write(Map.of("messages",
                List.of(Map.of("role", "user", "content", big)))));
        assertThat(chat.statusCode()).isEqualTo(400);
    }

    @Test
    void errorsAreWordedForUsersWithDetailsInTheLog() {
        ApiException unexpected = NodeSecurity.unexpected(new IllegalStateException("MemorySegment{ kind: native, address: 0x7f33 }"));
        assertThat(unexpected.getMessage()).doesNotContain("MemorySegment").doesNotContain("IllegalStateException").contains("error ");
        String load = NodeSecurity.loadFailure(Path.of("/models/bad.gguf"), new ArithmeticException("long overflow"));
        assertThat(load).contains("/models/bad.gguf").contains("not a valid GGUF model").doesNotContain("long overflow")
                .doesNotContain("ArithmeticException");
        // a worded format error stays as it is
        assertThat(NodeSecurity.loadFailure(Path.of("/models/bad.gguf"), new io.macfleet.node.gguf.GgufFormatException("/models/bad.gguf: truncated")))
                .isEqualTo("/models/bad.gguf: truncated");
    }

    /** The probe's bad GGUF: a tensor whose dimensions multiply past 2^63 (2^40 x 2^40 elements). */
    @Test
    void aModelWhoseSizesOverflowFailsWithASentenceNamingTheFile() throws Exception {
        byte[] bytes = Files.readAllBytes(TestModels.tiny(GgmlType.Q8_0));
        byte[] name = "token_embd.weight".getBytes(StandardCharsets.US_ASCII);
        int at = -1;
        for (int i = 8; i + name.length < bytes.length && at < 0; i++) {
            if (Arrays.equals(bytes, i, i + name.length, name, 0, name.length)
                    && java.nio.ByteBuffer.wrap(bytes, i - 8, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong() == name.length) {
                at = i + name.length;
            }
        }
        assertThat(at).as("the tensor table entry of token_embd.weight").isPositive();
        java.nio.ByteBuffer entry = java.nio.ByteBuffer.wrap(bytes, at, 4 + 16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThat(entry.getInt(at)).isEqualTo(2);
        entry.putLong(at + 4, 1L << 40).putLong(at + 12, 1L << 40);
        Path bad = directory.resolve("overflowing.gguf");
        Files.write(bad, bytes);
        NodeServer broken = new NodeServer(new NodeConfig(bad, "127.0.0.1", 0, 64, 1, 4, "bad", 8));
        try {
            broken.start();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (broken.loadError() == null && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(broken.loadError()).contains("overflowing.gguf").contains("not a valid GGUF model")
                    .doesNotContain("ArithmeticException").doesNotContain("long overflow");
            HttpResponse<String> health = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + broken.address().getPort() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(health.body()).contains("overflowing.gguf").doesNotContain("overflow\"");
        } finally {
            broken.close();
        }
    }

    @Test
    void keysAreReferencesAndPrivate() throws Exception {
        assertThatThrownBy(() -> NodeSecurity.of(KEY, null)).hasMessageContaining("env:NAME or file:PATH").hasMessageNotContaining(KEY);
        Path open = directory.resolve("open.key");
        Files.writeString(open, KEY);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> NodeSecurity.of("file:" + open, null)).hasMessageContaining("chmod 600");
        assertThatThrownBy(() -> NodeSecurity.of("env:MACFLEET_NODE_TEST_UNSET_VARIABLE", null)).hasMessageContaining("not set");
        assertThatThrownBy(() -> NodeSecurity.of(null, "abc")).hasMessageContaining("64 hexadecimal");
    }

    private static Process node(List<String> jvm, String... arguments) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules", "jdk.incubator.vector", "-Xmx128m", "-cp", System.getProperty("java.class.path")));
        command.addAll(jvm);
        command.add("io.macfleet.node.Main");
        command.addAll(List.of(arguments));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    @Test
    void aHalfSentRequestIsClosedAndAModelWithAnotherHashRefused() throws Exception {
        Path model = TestModels.tiny(GgmlType.Q8_0);
        Process wrong = node(List.of(), "serve", "--model", model.toString(), "--port", "0", "--model-sha256", "0".repeat(64));
        try {
            assertThat(wrong.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            String log = new String(wrong.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(wrong.exitValue()).isEqualTo(2);
            assertThat(log).contains("expects " + "0".repeat(64)).containsPattern("SHA-256 [0-9a-f]{64}");
        } finally {
            wrong.destroyForcibly();
        }
        int port = io.macfleet.node.cluster.LaunchLocal.freePorts(1)[0];
        Process node = node(List.of("-Dsun.net.httpserver.maxReqTime=2"), "serve", "--model", model.toString(), "--port",
                Integer.toString(port));
        try {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (true) {
                try (Socket probe = new Socket("127.0.0.1", port)) {
                    break;
                } catch (java.io.IOException e) {
                    assertThat(System.nanoTime()).as("the node listens in time").isLessThan(deadline);
                    Thread.sleep(100);
                }
            }
            try (Socket socket = new Socket("127.0.0.1", port)) {
                socket.setSoTimeout(15_000);
                socket.getOutputStream().write("POST /v1/completions HTTP/1.1\r\nHost: node\r\nContent-Le".getBytes(StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
                long start = System.nanoTime();
                InputStream input = socket.getInputStream();
                int read = input.read();
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("a half-sent request closed after %.1f s (sun.net.httpserver.maxReqTime=2)%n", seconds);
                assertThat(read).isEqualTo(-1);
                assertThat(seconds).isBetween(1.0, 5.0);
            }
        } finally {
            node.destroyForcibly();
        }
    }
}
