package io.macfleet.mdm.nanohub;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/** A one-route-at-a-time HTTP server for client tests: records each request and answers with what the test set. */
final class ReplayServer implements AutoCloseable {

    record Received(String method, String pathAndQuery, String authorization, String contentType, String body) {
    }

    /** How to answer; {@code hangMillis} delays everything (a hung server). */
    record Answer(int status, String body, List<String[]> headers, long hangMillis) {
        static Answer json(int status, String body) {
            return new Answer(status, body, List.<String[]>of(new String[] {"Content-Type", "application/json"}), 0);
        }

        static Answer empty(int status) {
            return new Answer(status, "", List.of(), 0);
        }
    }

    interface Responder {
        Answer answer(Received request);
    }

    private final HttpServer server;
    final List<Received> received = new CopyOnWriteArrayList<>();
    volatile Responder responder = request -> Answer.empty(404);

    ReplayServer() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private void handle(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Received request = new Received(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath()
                + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery()),
                exchange.getRequestHeaders().getFirst("Authorization"), exchange.getRequestHeaders().getFirst("Content-Type"), body);
        received.add(request);
        Answer answer = responder.answer(request);
        if (answer.hangMillis() > 0) {
            try {
                Thread.sleep(answer.hangMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (String[] header : answer.headers()) {
            exchange.getResponseHeaders().add(header[0], header[1]);
        }
        byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
        boolean noBody = answer.status() == 204 || answer.status() == 304 || bytes.length == 0;
        exchange.sendResponseHeaders(answer.status(), noBody ? -1 : bytes.length);
        if (!noBody) {
            exchange.getResponseBody().write(bytes);
        }
        exchange.close();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
