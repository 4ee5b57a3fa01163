package io.macfleet.node.cluster;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.macfleet.node.json.Json;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** The HTTP side of a rank other than 0: only /health (503 naming what is missing) and /metrics. */
public final class WorkerServer implements AutoCloseable {
    private final HttpServer http;
    private final ClusterNode node;
    private volatile boolean loaded;

    public WorkerServer(String host, int port, ClusterNode node) throws IOException {
        this.node = node;
        io.macfleet.node.http.HttpServerLimits.configure(); // the same request and idle timeouts as rank 0
        http = HttpServer.create(new InetSocketAddress(host, port), 16);
        http.createContext("/", this::handle);
    }

    public void start() {
        http.start();
    }

    public void loaded() {
        loaded = true;
    }

    public InetSocketAddress address() {
        return http.getAddress();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/health")) {
                String problem = loaded ? node.problem() : "the model is loading";
                Map<String, Object> body = new LinkedHashMap<>();
                body.put("status", problem == null ? "ok" : "degraded");
                body.put("rank", node.rank());
                if (problem != null) {
                    body.put("error", problem);
                }
                send(exchange, problem == null ? 200 : 503, "application/json", Json.write(body));
            } else if (path.equals("/metrics")) {
                send(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", ClusterMetrics.render(node));
            } else {
                send(exchange, 404, "application/json", Json.write(Map.of("error", Map.of("message",
                        "rank " + node.rank() + " serves only /health and /metrics; the API is on rank 0",
                        "type", "invalid_request_error", "code", "not_found"))));
            }
        }
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    @Override
    public void close() {
        http.stop(0);
    }
}
