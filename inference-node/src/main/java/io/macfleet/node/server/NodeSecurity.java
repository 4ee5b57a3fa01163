package io.macfleet.node.server;

import com.sun.net.httpserver.HttpExchange;
import io.macfleet.node.http.HttpServerLimits;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The HTTP API's transport guards: the bearer key ({@code serve --api-key env:NAME|file:PATH}), the body limit, the
 * bound on prompt text before tokenizing, the JDK server's header and idle timeouts, errors worded for users with
 * the details in the log, and the model's SHA-256 check at start ({@code --model-sha256 HEX}).
 */
public record NodeSecurity(byte[] apiKeyDigest, String modelSha256) {
    /** Request bodies above this are refused (413) from their Content-Length, without reading them. */
    public static final int MAXIMUM_BODY_BYTES = 1 << 20;
    /**
     * Prompt text per token of context a request may carry: more than this many bytes per token cannot fit (a
     * token is a few bytes of text on average), and tokenizing megabytes costs seconds of CPU for nothing.
     */
    public static final int PROMPT_BYTES_PER_CONTEXT_TOKEN = 32;
    /** Seconds a client may take to send a whole request (headers and body); then the connection is closed. */
    public static final String REQUEST_SECONDS = HttpServerLimits.REQUEST_SECONDS;
    /** Seconds an idle keep-alive connection stays open. */
    public static final String IDLE_SECONDS = HttpServerLimits.IDLE_SECONDS;

    /** No key, no hash: every request is served (the node on loopback for its own host). */
    public static NodeSecurity open() {
        return new NodeSecurity(null, null);
    }

    /**
     * From the options: {@code apiKeyReference} is {@code env:NAME} or {@code file:PATH} (the key never on the
     * command line, where every local user sees it with ps); a key file must not be readable by group or others.
     */
    public static NodeSecurity of(String apiKeyReference, String modelSha256) throws IOException {
        byte[] digest = null;
        if (apiKeyReference != null) {
            String key = resolve(apiKeyReference).strip();
            if (key.length() < 16) {
                throw new IllegalArgumentException("--api-key " + apiKeyReference + " gives a key of " + key.length()
                        + " characters; use at least 16 (openssl rand -hex 32)");
            }
            digest = sha256(key.getBytes(StandardCharsets.UTF_8));
        }
        if (modelSha256 != null && !modelSha256.matches("[0-9a-fA-F]{64}")) {
            throw new IllegalArgumentException("--model-sha256 must be 64 hexadecimal digits, got '" + modelSha256 + "'");
        }
        return new NodeSecurity(digest, modelSha256 == null ? null : modelSha256.toLowerCase());
    }

    private static String resolve(String reference) throws IOException {
        if (reference.startsWith("env:")) {
            String value = System.getenv(reference.substring(4));
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException("--api-key " + reference + ": the environment variable is not set");
            }
            return value;
        }
        if (reference.startsWith("file:")) {
            Path file = Path.of(reference.substring(5));
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException("--api-key " + reference + ": no such file");
            }
            PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
            if (view != null) {
                Set<PosixFilePermission> permissions = view.readAttributes().permissions();
                if (permissions.contains(PosixFilePermission.GROUP_READ) || permissions.contains(PosixFilePermission.OTHERS_READ)) {
                    throw new IllegalArgumentException("--api-key " + reference + " is readable by its group or others: run chmod 600 on it");
                }
            }
            return Files.readString(file);
        }
        throw new IllegalArgumentException("--api-key takes a reference, env:NAME or file:PATH (never the key itself), got '"
                + (reference.length() > 8 ? reference.substring(0, 4) + "..." : reference) + "'");
    }

    boolean keyRequired() {
        return apiKeyDigest != null;
    }

    /** 401 unless the request carries {@code Authorization: Bearer KEY} (compared in constant time). */
    void authorize(HttpExchange exchange) {
        if (apiKeyDigest == null) {
            return;
        }
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        byte[] given = header != null && header.regionMatches(true, 0, "Bearer ", 0, 7)
                ? sha256(header.substring(7).strip().getBytes(StandardCharsets.UTF_8)) : new byte[32];
        if (!MessageDigest.isEqual(apiKeyDigest, given) || header == null) {
            exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
            throw new ApiException(401, "invalid_request_error", header == null
                    ? "this node needs an API key: send Authorization: Bearer <key>"
                    : "the API key is not valid", null, "invalid_api_key");
        }
    }

    /** Sets the JDK server's request and idle timeouts unless the JVM was started with others (-D...). */
    public static void configureHttpServer() {
        HttpServerLimits.configure();
    }

    /** The request body, refused with 413 as soon as it is known to be larger than {@link #MAXIMUM_BODY_BYTES}. */
    static byte[] readBody(HttpExchange exchange) throws IOException {
        String length = exchange.getRequestHeaders().getFirst("Content-Length");
        if (length != null && length.matches("\\d{1,18}") && Long.parseLong(length) > MAXIMUM_BODY_BYTES) {
            throw tooLarge(exchange, Long.parseLong(length) + " bytes");
        }
        InputStream body = exchange.getRequestBody();
        byte[] bytes = body.readNBytes(MAXIMUM_BODY_BYTES + 1);
        if (bytes.length > MAXIMUM_BODY_BYTES) {
            throw tooLarge(exchange, "more than " + MAXIMUM_BODY_BYTES + " bytes");
        }
        return bytes;
    }

    private static ApiException tooLarge(HttpExchange exchange, String size) {
        // the rest is not read: the server closes the connection after the answer
        exchange.getResponseHeaders().set("Connection", "close");
        return new ApiException(413, "invalid_request_error", "the request body has " + size + "; this node takes at most "
                + MAXIMUM_BODY_BYTES + " bytes", null, "request_too_large");
    }

    /** 400 when the prompt text cannot fit the context, before any of it is tokenized. */
    static void checkPromptBytes(Map<String, Object> body, int contextLength) {
        long bytes = textBytes(body.get("prompt")) + textBytes(body.get("messages"));
        long limit = (long) contextLength * PROMPT_BYTES_PER_CONTEXT_TOKEN;
        if (bytes > limit) {
            throw new ApiException(400, "invalid_request_error", "the prompt has " + bytes + " bytes of text, more than a context of "
                    + contextLength + " tokens can hold (at most " + limit + " bytes are tokenized)",
                    body.containsKey("messages") ? "messages" : "prompt", "context_length_exceeded");
        }
    }

    private static long textBytes(Object value) {
        return switch (value) {
            case String text -> text.getBytes(StandardCharsets.UTF_8).length;
            case Map<?, ?> map -> map.values().stream().mapToLong(NodeSecurity::textBytes).sum();
            case List<?> list -> list.stream().mapToLong(NodeSecurity::textBytes).sum();
            case null, default -> 0;
        };
    }

    /** An unexpected failure: worded for the user with an id, the details (type, message, trace) in the log only. */
    static ApiException unexpected(RuntimeException e) {
        String id = UUID.randomUUID().toString().substring(0, 8);
        System.err.println("inference-node: error " + id + ":");
        e.printStackTrace();
        return new ApiException(500, "server_error", "the node failed to answer this request (error " + id
                + " in the node's log)", null, null);
    }

    /** A model that failed to load, in a sentence naming the file (details of unexpected failures in the log). */
    public static String loadFailure(Path model, Throwable e) {
        if (e instanceof io.macfleet.node.gguf.GgufFormatException || e instanceof io.macfleet.node.model.KvCache.InsufficientMemoryException
                || e instanceof IllegalArgumentException || e instanceof IllegalStateException || e instanceof IOException
                || e instanceof OutOfMemoryError) {
            String message = String.valueOf(e.getMessage());
            return message.contains(model.getFileName().toString()) ? message : model + ": " + message;
        }
        System.err.println("inference-node: loading " + model + " failed:");
        e.printStackTrace();
        String what = e instanceof ArithmeticException ? "a size or offset in its header is out of range"
                : e instanceof IndexOutOfBoundsException ? "its header or tensor table points outside the file"
                : "it is not a model this node can read";
        return model + " is not a valid GGUF model: " + what + " (details in the node's log)";
    }

    /** Refuses a model whose SHA-256 is not the expected one; both hashes go to the log. */
    public void checkModel(Path model) throws IOException {
        if (modelSha256 == null) {
            return;
        }
        long start = System.nanoTime();
        String actual;
        try (InputStream input = Files.newInputStream(model)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[1 << 20];
            int read;
            while ((read = input.read(buffer)) >= 0) {
                digest.update(buffer, 0, read);
            }
            actual = HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
        if (!actual.equals(modelSha256)) {
            System.err.println("inference-node: model " + model + " has SHA-256 " + actual + " but --model-sha256 expects "
                    + modelSha256);
            throw new ModelMismatchException(model + " is not the model this node was given: its SHA-256 is " + actual
                    + ", expected " + modelSha256);
        }
        System.err.printf("inference-node: model %s SHA-256 checked (%.1f s)%n", model, (System.nanoTime() - start) / 1e9);
    }

    /** The model file differs from the expected hash: the node must not start (exit code 2). */
    public static final class ModelMismatchException extends IllegalArgumentException {
        public ModelMismatchException(String message) {
            super(message);
        }
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

}
