package io.macfleet.console;

import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The console's two static files: its style sheet and htmx, read from the htmx webjar on the class path (so
 * there is no front-end build and no CDN), under stable names that do not change with the htmx version.
 */
final class ConsoleAssets {

    private static final Map<String, Optional<byte[]>> LOADED = new ConcurrentHashMap<>();

    private ConsoleAssets() {
    }

    static Optional<Response> response(String file) {
        String type;
        String resource;
        switch (file) {
            case "console.css" -> {
                type = "text/css; charset=UTF-8";
                resource = "console/console.css";
            }
            case "console.js" -> {
                type = "text/javascript; charset=UTF-8";
                resource = "console/console.js";
            }
            case "htmx.min.js" -> {
                type = "text/javascript; charset=UTF-8";
                resource = "META-INF/resources/webjars/htmx.org/" + htmxVersion() + "/dist/htmx.min.js";
            }
            default -> {
                return Optional.empty();
            }
        }
        return LOADED.computeIfAbsent(resource, ConsoleAssets::read)
                .map(bytes -> Response.ok(bytes, type).header("Cache-Control", "max-age=3600").build());
    }

    static String htmxVersion() {
        try (InputStream in = resource("META-INF/maven/org.webjars.npm/htmx.org/pom.properties")) {
            if (in == null) {
                throw new IllegalStateException("the htmx webjar (org.webjars.npm:htmx.org) is not on the class path");
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Optional<byte[]> read(String resource) {
        try (InputStream in = resource(resource)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static InputStream resource(String name) {
        return Thread.currentThread().getContextClassLoader().getResourceAsStream(name);
    }
}
