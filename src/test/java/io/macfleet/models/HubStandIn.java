package io.macfleet.models;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A local server that answers like the Hugging Face hub, from its public API documentation and huggingface_hub's
 * file_download.py: {@code GET /api/models/{repo}/revision/{rev}} lists the commit and the siblings (with
 * {@code lfs.sha256} for LFS files when asked {@code ?blobs=true}); {@code HEAD|GET /{repo}/resolve/{commit}/{file}}
 * answers an LFS file with 302 to a CDN-like path on another origin carrying {@code X-Linked-Etag} (the quoted SHA-256),
 * {@code X-Linked-Size} and {@code X-Repo-Commit}, and a small file with 200 and its git blob SHA-1 as {@code ETag};
 * the CDN path honours {@code Range: bytes=N-} with 206. Faults: a token it requires (401 without), a body cut after
 * some bytes (once), a wrong published hash.
 */
final class HubStandIn implements AutoCloseable {

    static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";
    private static final Pattern RESOLVE = Pattern.compile("/([^/]+/[^/]+)/resolve/([^/]+)/(.+)");
    private static final Pattern CDN = Pattern.compile("/cdn/([0-9a-f]{64})");

    private final HttpServer server;
    /** The CDN is another origin, as cdn-lfs.hf.co is: what the hub's token must not reach. */
    private final HttpServer cdnServer;
    final String repository;
    /** file → bytes; files whose name ends with .json are served as small (non-LFS) files. */
    final Map<String, byte[]> files = new LinkedHashMap<>();
    final List<String> requests = new CopyOnWriteArrayList<>();
    final List<String> authorizations = new CopyOnWriteArrayList<>();
    volatile String requiredToken;
    /** When positive, the next CDN answer sends only this many bytes of the body, then closes the connection. */
    volatile int cutAfter;
    volatile boolean wrongHash;

    HubStandIn(String repository) throws IOException {
        this.repository = repository;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.start();
        cdnServer = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        cdnServer.createContext("/", this::handle);
        cdnServer.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            requests.add(exchange.getRequestMethod() + " " + path + (exchange.getRequestHeaders().containsKey("Range")
                    ? " " + exchange.getRequestHeaders().getFirst("Range") : ""));
            String authorization = exchange.getRequestHeaders().getFirst("Authorization");
            authorizations.add(path + " " + (authorization == null ? "-" : authorization));
            if (path.startsWith("/cdn/")) {
                cdn(exchange, path);
                return;
            }
            if (requiredToken != null && !("Bearer " + requiredToken).equals(authorization)) {
                send(exchange, 401, "{\"error\": \"Invalid credentials in Authorization header\"}");
                return;
            }
            if (path.equals("/api/models/" + repository + "/revision/main") || path.equals("/api/models/" + repository + "/revision/" + COMMIT)) {
                StringBuilder siblings = new StringBuilder();
                for (Map.Entry<String, byte[]> file : files.entrySet()) {
                    siblings.append(siblings.isEmpty() ? "" : ",").append("{\"rfilename\": \"").append(file.getKey()).append("\", \"size\": ")
                            .append(file.getValue().length);
                    if (!file.getKey().endsWith(".json")) {
                        siblings.append(", \"lfs\": {\"sha256\": \"").append(sha256(file.getValue())).append("\", \"size\": ")
                                .append(file.getValue().length).append(", \"pointerSize\": 134}");
                    }
                    siblings.append('}');
                }
                send(exchange, 200, "{\"_id\": \"x\", \"id\": \"" + repository + "\", \"sha\": \"" + COMMIT + "\", \"siblings\": [" + siblings + "]}");
                return;
            }
            Matcher resolve = RESOLVE.matcher(path);
            if (resolve.matches() && resolve.group(1).equals(repository) && resolve.group(2).equals(COMMIT) && files.containsKey(resolve.group(3))) {
                byte[] bytes = files.get(resolve.group(3));
                exchange.getResponseHeaders().add("X-Repo-Commit", COMMIT);
                if (resolve.group(3).endsWith(".json")) {
                    exchange.getResponseHeaders().add("ETag", "\"" + gitBlobSha1(bytes) + "\"");
                    body(exchange, 200, bytes, 0, bytes.length);
                    return;
                }
                String sha256 = sha256(bytes);
                exchange.getResponseHeaders().add("X-Linked-Etag", "\"" + (wrongHash ? sha256(new byte[] {1}) : sha256) + "\"");
                exchange.getResponseHeaders().add("X-Linked-Size", Integer.toString(bytes.length));
                exchange.getResponseHeaders().add("ETag", "\"" + sha256 + "\"");
                exchange.getResponseHeaders().add("Location", "http://127.0.0.1:" + cdnServer.getAddress().getPort() + "/cdn/" + sha256);
                exchange.sendResponseHeaders(302, -1);
                return;
            }
            exchange.getResponseHeaders().add("X-Error-Code", "EntryNotFound");
            send(exchange, 404, "{\"error\": \"Entry not found\"}");
        }
    }

    private void cdn(HttpExchange exchange, String path) throws IOException {
        Matcher cdn = CDN.matcher(path);
        byte[] bytes = cdn.matches() ? files.values().stream().filter(value -> sha256(value).equals(cdn.group(1))).findFirst().orElse(null) : null;
        if (bytes == null) {
            send(exchange, 404, "no such object");
            return;
        }
        int from = 0;
        String range = exchange.getRequestHeaders().getFirst("Range");
        if (range != null && range.matches("bytes=\\d+-")) {
            from = Integer.parseInt(range.substring(6, range.length() - 1));
            exchange.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + (bytes.length - 1) + "/" + bytes.length);
        }
        int cut = cutAfter;
        cutAfter = 0;
        if (cut > 0) {
            // Announce the whole length, send part of it, close: a connection that broke mid-body.
            exchange.sendResponseHeaders(range == null ? 200 : 206, bytes.length - from);
            OutputStream out = exchange.getResponseBody();
            out.write(bytes, from, Math.min(cut, bytes.length - from));
            out.flush();
            throw new IOException("cut on purpose");
        }
        body(exchange, range == null ? 200 : 206, bytes, from, bytes.length - from);
    }

    private static void body(HttpExchange exchange, int status, byte[] bytes, int from, int length) throws IOException {
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.getResponseHeaders().add("Content-Length", Integer.toString(length));
        exchange.sendResponseHeaders(status, head ? -1 : length);
        if (!head) {
            exchange.getResponseBody().write(bytes, from, length);
        }
    }

    private static void send(HttpExchange exchange, int status, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        body(exchange, status, bytes, 0, bytes.length);
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static String gitBlobSha1(byte[] bytes) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            digest.update(("blob " + bytes.length + "\0").getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(digest.digest(bytes));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        cdnServer.stop(0);
    }
}
