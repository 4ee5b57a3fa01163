package io.macfleet.node.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.macfleet.node.json.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;

/**
 * {@code inference-node proxy}: an authenticating reverse proxy for a server that has no API key of its own
 * (mlx_lm.server). It checks {@code Authorization: Bearer} as the node's own API does ({@link NodeSecurity}, constant
 * time, 401 problem body) and forwards everything else to the upstream, bodies streamed both ways so that server-sent
 * events reach the client chunk by chunk.
 */
public final class AuthenticatingProxy implements AutoCloseable {
    /** Time to open a connection to the upstream; it runs on the same Mac, so this is generous. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /**
     * Time until the upstream's response headers: a non-streamed completion of a large model sends them only at the
     * end of generation, so this bounds a whole answer rather than a network step.
     */
    static final Duration RESPONSE_TIMEOUT = Duration.ofMinutes(10);
    /** Headers of one connection, not of the message (RFC 9110 7.6.1), and those the JDK client sets itself. */
    private static final Set<String> NOT_FORWARDED = Set.of("connection", "keep-alive", "proxy-connection", "transfer-encoding",
            "te", "trailer", "upgrade", "host", "content-length", "expect", "authorization", "proxy-authorization", "date");

    /**
     * Answered by the proxy itself, without a key (as the node's and llama-server's /health): 200 when the upstream
     * answers {@value #UPSTREAM_READY_PATH} with 200, else 503. It tells up or down and nothing else, so supervision
     * and readiness probes need no secret.
     */
    static final String HEALTH_PATH = "/health";
    static final String UPSTREAM_READY_PATH = "/v1/models";
    private static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(5);

    private final HttpServer http;
    private final HttpClient client;
    private final URI upstream;
    private final NodeSecurity security;

    /**
     * @param listen   where to answer; a wildcard address is refused (nothing listens on every interface of a Mac)
     * @param upstream the server behind, e.g. {@code http://127.0.0.1:18080}
     * @param security carries the key; a proxy without one would have no reason to exist, so one is required
     */
    public AuthenticatingProxy(InetSocketAddress listen, URI upstream, NodeSecurity security) throws IOException {
        if (listen.getAddress() == null || listen.getAddress().isAnyLocalAddress()) {
            throw new IllegalArgumentException("--listen " + listen.getHostString() + " is a wildcard or unresolved address: name "
                    + "the one address to answer on (e.g. the Mac's management address)");
        }
        if (!security.keyRequired()) {
            throw new IllegalArgumentException("proxy needs --api-key env:NAME|file:PATH");
        }
        this.upstream = upstream;
        this.security = security;
        this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER).build();
        NodeSecurity.configureHttpServer();
        http = HttpServer.create(listen, 64);
        http.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        http.createContext("/", this::handle);
    }

    /** {@code ADDRESS:PORT} (IPv6 in brackets) to a socket address, refusing wildcards. */
    public static InetSocketAddress listenAddress(String text) throws IOException {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || !text.substring(colon + 1).matches("\\d{1,5}")) {
            throw new IllegalArgumentException("--listen must be ADDRESS:PORT, got '" + text + "'");
        }
        String host = text.substring(0, colon).replaceAll("^\\[|]$", "");
        InetAddress address = InetAddress.getByName(host);
        if (address.isAnyLocalAddress()) {
            throw new IllegalArgumentException("--listen " + text + " is a wildcard address: name the one address to answer on "
                    + "(e.g. the Mac's management address)");
        }
        return new InetSocketAddress(address, Integer.parseInt(text.substring(colon + 1)));
    }

    /** {@code HOST:PORT} of the upstream to its base URI. */
    public static URI upstreamUri(String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || !text.substring(colon + 1).matches("\\d{1,5}")) {
            throw new IllegalArgumentException("--to must be HOST:PORT, got '" + text + "'");
        }
        return URI.create("http://" + text);
    }

    public void start() {
        http.start();
    }

    public InetSocketAddress address() {
        return http.getAddress();
    }

    @Override
    public void close() {
        http.stop(0);
        client.close();
    }

    private void handle(HttpExchange exchange) {
        try (exchange) {
            try {
                if (exchange.getRequestURI().getPath().equals(HEALTH_PATH) && exchange.getRequestMethod().equals("GET")) {
                    health(exchange);
                    return;
                }
                security.authorize(exchange);
                forward(exchange);
            } catch (ApiException e) {
                sendError(exchange, e);
            } catch (UncheckedIOException e) {
                // the client went away mid-stream
            } catch (RuntimeException e) {
                sendError(exchange, NodeSecurity.unexpected(e));
            }
        } catch (IOException ignored) {
            // the client closed the connection
        }
    }

    private void forward(HttpExchange exchange) throws IOException {
        byte[] body = NodeSecurity.readBody(exchange);
        String method = exchange.getRequestMethod();
        HttpRequest.Builder request = HttpRequest.newBuilder(upstream.resolve(exchange.getRequestURI().getRawPath()
                        + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery())))
                .timeout(RESPONSE_TIMEOUT)
                .method(method, body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        exchange.getRequestHeaders().forEach((name, values) -> {
            if (!NOT_FORWARDED.contains(name.toLowerCase())) {
                values.forEach(value -> request.header(name, value));
            }
        });
        HttpResponse<InputStream> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiException(503, "server_error", "the proxy was stopped", null, null);
        } catch (IOException e) {
            System.err.println("inference-node proxy: " + method + " " + exchange.getRequestURI().getPath() + " to " + upstream
                    + " failed: " + e);
            throw new ApiException(502, "server_error", "the server behind this proxy does not answer", null, "upstream_unavailable");
        }
        response.headers().map().forEach((name, values) -> {
            if (!NOT_FORWARDED.contains(name.toLowerCase()) && !name.startsWith(":")) {
                exchange.getResponseHeaders().put(name, List.copyOf(values));
            }
        });
        boolean noBody = method.equals("HEAD") || response.statusCode() == 204 || response.statusCode() == 304;
        try (InputStream from = response.body()) {
            // chunked (0) rather than the upstream's length: the body is passed on as it comes
            exchange.sendResponseHeaders(response.statusCode(), noBody ? -1 : 0);
            if (noBody) {
                return;
            }
            OutputStream to = exchange.getResponseBody();
            byte[] buffer = new byte[16 * 1024];
            int read;
            while ((read = from.read(buffer)) >= 0) {
                to.write(buffer, 0, read);
                // each piece goes out now: an SSE event must not wait for the next one
                to.flush();
            }
        }
    }

    private void health(HttpExchange exchange) throws IOException {
        exchange.getRequestBody().readNBytes(NodeSecurity.MAXIMUM_BODY_BYTES);
        int status;
        try {
            status = client.send(HttpRequest.newBuilder(upstream.resolve(UPSTREAM_READY_PATH)).timeout(HEALTH_TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            status = -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status = -1;
        }
        if (status != 200) {
            throw new ApiException(503, "server_error", status < 0 ? "the server behind this proxy does not answer"
                    : "the server behind this proxy answers " + UPSTREAM_READY_PATH + " with HTTP " + status, null, "upstream_unavailable");
        }
        byte[] bytes = "{\"status\":\"ok\"}".getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    private static void sendError(HttpExchange exchange, ApiException e) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("message", e.getMessage());
        error.put("type", e.type);
        error.put("param", e.param);
        error.put("code", e.code);
        try {
            byte[] bytes = Json.write(Map.of("error", error)).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(e.status, bytes.length);
            exchange.getResponseBody().write(bytes);
        } catch (IOException | RuntimeException ignored) {
            // headers already sent or the client is gone
        }
    }
}
