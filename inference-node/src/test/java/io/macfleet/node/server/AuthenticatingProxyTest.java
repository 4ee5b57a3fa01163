package io.macfleet.node.server;

import com.sun.net.httpserver.HttpServer;
import io.macfleet.node.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code inference-node proxy} in front of a real HTTP server (the JDK's, answering as mlx_lm.server does: JSON, and
 * server-sent events for {@code stream: true}): 401 without or with a wrong key, the keyed request passed through with
 * its body, method and query, the key not passed on, SSE events arriving before the upstream has finished, and no
 * wildcard listen address.
 */
class AuthenticatingProxyTest {
    private static final String KEY = "k3y-for-the-proxy-test-0123456789abcdef";
    private static final CountDownLatch SECOND_EVENT = new CountDownLatch(1);
    private static HttpServer upstream;
    private static AuthenticatingProxy proxy;
    private static HttpClient client;
    private static Path directory;
    private static URI base;

    @BeforeAll
    static void start() throws Exception {
        upstream = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        upstream.createContext("/v1/models", exchange -> {
            byte[] answer = "{\"object\":\"list\",\"data\":[]}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        upstream.createContext("/v1/echo", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            byte[] answer = Json.write(Map.of("method", exchange.getRequestMethod(),
                    "query", String.valueOf(exchange.getRequestURI().getRawQuery()),
                    "body", new String(body, StandardCharsets.UTF_8),
                    "authorization", String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")),
                    "custom", String.valueOf(exchange.getRequestHeaders().getFirst("X-Custom")))).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.getResponseHeaders().set("X-Upstream", "yes");
            exchange.sendResponseHeaders(201, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        upstream.createContext("/v1/chat/completions", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            out.write("data: {\"choices\":[{\"delta\":{\"content\":\"one\"}}]}\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            try {
                // the second event only once the client has seen the first: a buffering proxy would hang here
                if (!SECOND_EVENT.await(20, TimeUnit.SECONDS)) {
                    out.write("data: {\"error\":\"the first event did not reach the client\"}\n\n".getBytes(StandardCharsets.UTF_8));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            out.write("data: {\"choices\":[{\"delta\":{\"content\":\"two\"}}]}\n\ndata: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
            exchange.close();
        });
        upstream.setExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
        upstream.start();
        directory = Files.createTempDirectory("proxy-test");
        Path keyFile = directory.resolve("api-key");
        Files.writeString(keyFile, KEY + "\n");
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
        proxy = new AuthenticatingProxy(AuthenticatingProxy.listenAddress("127.0.0.1:0"),
                AuthenticatingProxy.upstreamUri("127.0.0.1:" + upstream.getAddress().getPort()),
                NodeSecurity.of("file:" + keyFile, null));
        proxy.start();
        base = URI.create("http://127.0.0.1:" + proxy.address().getPort());
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() throws Exception {
        SECOND_EVENT.countDown();
        proxy.close();
        upstream.stop(0);
        Files.deleteIfExists(directory.resolve("api-key"));
        Files.deleteIfExists(directory);
    }

    @Test
    void refusesRequestsWithoutOrWithAWrongKey() throws Exception {
        HttpResponse<String> anonymous = client.send(HttpRequest.newBuilder(base.resolve("/v1/echo")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.headers().firstValue("WWW-Authenticate")).contains("Bearer");
        assertThat(anonymous.headers().firstValue("X-Upstream")).isEmpty();
        assertThat(error(anonymous)).containsEntry("code", "invalid_api_key")
                .containsEntry("message", "this node needs an API key: send Authorization: Bearer <key>");

        HttpResponse<String> wrong = client.send(HttpRequest.newBuilder(base.resolve("/v1/echo"))
                .header("Authorization", "Bearer " + KEY.substring(1) + "x").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(error(wrong)).containsEntry("message", "the API key is not valid");

        // every path but the proxy's own /health is behind the key, /metrics included
        HttpResponse<String> metrics = client.send(HttpRequest.newBuilder(base.resolve("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.statusCode()).isEqualTo(401);
    }

    @Test
    void passesAKeyedRequestThroughWithoutTheKey() throws Exception {
        HttpResponse<String> answer = client.send(HttpRequest.newBuilder(base.resolve("/v1/echo?x=1&y=two"))
                .header("Authorization", "Bearer " + KEY).header("X-Custom", "kept")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(201);
        assertThat(answer.headers().firstValue("X-Upstream")).contains("yes");
        assertThat(answer.headers().firstValue("Content-Type")).contains("application/json");
        @SuppressWarnings("unchecked")
        Map<String, Object> echoed = (Map<String, Object>) Json.parse(answer.body());
        assertThat(echoed).containsEntry("method", "POST").containsEntry("query", "x=1&y=two")
                .containsEntry("body", "{\"model\":\"m\"}").containsEntry("custom", "kept")
                .containsEntry("authorization", "null");
    }

    @Test
    void refusesABodyAboveTheLimitFromItsLength() throws Exception {
        HttpResponse<String> answer = client.send(HttpRequest.newBuilder(base.resolve("/v1/echo"))
                .header("Authorization", "Bearer " + KEY)
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[NodeSecurity.MAXIMUM_BODY_BYTES + 1])).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(413);
        assertThat(error(answer)).containsEntry("code", "request_too_large");
    }

    @Test
    void passesServerSentEventsOnAsTheyCome() throws Exception {
        HttpResponse<InputStream> answer = client.send(HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
                .header("Authorization", "Bearer " + KEY)
                .POST(HttpRequest.BodyPublishers.ofString("{\"stream\":true}")).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("Content-Type")).contains("text/event-stream");
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(answer.body(), StandardCharsets.UTF_8))) {
            // read while the upstream still holds its second event back
            assertThat(reader.readLine()).isEqualTo("data: {\"choices\":[{\"delta\":{\"content\":\"one\"}}]}");
            SECOND_EVENT.countDown();
            StringBuilder rest = new StringBuilder();
            String line;
            while ((line = reader.readLine()) != null) {
                rest.append(line).append('\n');
            }
            assertThat(rest.toString()).isEqualTo("\ndata: {\"choices\":[{\"delta\":{\"content\":\"two\"}}]}\n\ndata: [DONE]\n\n");
        }
    }

    @Test
    void refusesAWildcardListenAddress() throws Exception {
        assertThatThrownBy(() -> AuthenticatingProxy.listenAddress("0.0.0.0:8080"))
                .hasMessageContaining("--listen 0.0.0.0:8080 is a wildcard address");
        assertThatThrownBy(() -> AuthenticatingProxy.listenAddress("[::]:8080")).hasMessageContaining("wildcard");
        assertThatThrownBy(() -> new AuthenticatingProxy(new InetSocketAddress(0), URI.create("http://127.0.0.1:1"),
                NodeSecurity.of("file:" + directory.resolve("api-key"), null))).hasMessageContaining("wildcard");
        assertThatThrownBy(() -> new AuthenticatingProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                URI.create("http://127.0.0.1:1"), NodeSecurity.open())).hasMessageContaining("needs --api-key");
        assertThatThrownBy(() -> AuthenticatingProxy.listenAddress("8080")).hasMessageContaining("ADDRESS:PORT");
    }

    @Test
    void answers502WhenTheUpstreamIsDown() throws Exception {
        try (AuthenticatingProxy nowhere = new AuthenticatingProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                URI.create("http://127.0.0.1:" + unusedPort()), NodeSecurity.of("file:" + directory.resolve("api-key"), null))) {
            nowhere.start();
            HttpResponse<String> answer = client.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + nowhere.address().getPort() + "/v1/models"))
                    .header("Authorization", "Bearer " + KEY).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).isEqualTo(502);
            assertThat(error(answer)).containsEntry("code", "upstream_unavailable");
        }
    }

    @Test
    void answersHealthWithoutAKeyFromTheUpstreamsModels() throws Exception {
        HttpResponse<String> up = client.send(HttpRequest.newBuilder(base.resolve("/health")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(up.statusCode()).isEqualTo(200);
        assertThat(up.body()).isEqualTo("{\"status\":\"ok\"}");
        try (AuthenticatingProxy nowhere = new AuthenticatingProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                URI.create("http://127.0.0.1:" + unusedPort()), NodeSecurity.of("file:" + directory.resolve("api-key"), null))) {
            nowhere.start();
            HttpResponse<String> down = client.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + nowhere.address().getPort() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(error(down)).containsEntry("message", "the server behind this proxy does not answer");
        }
    }

    private static int unusedPort() throws Exception {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> error(HttpResponse<String> response) {
        return (Map<String, Object>) ((Map<String, Object>) Json.parse(response.body())).get("error");
    }
}
