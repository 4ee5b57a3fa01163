package io.macfleet.console;

import io.quarkus.qute.TemplateInstance;
import jakarta.ws.rs.core.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.stream.Collectors;

/** Small helpers the console's resources share: query strings and form fields. */
final class ConsoleSupport {

    private ConsoleSupport() {
    }

    static Response page(int status, TemplateInstance template) {
        return Pages.response(status, template);
    }

    /** A page that htmx fetches again every few seconds: never cached. */
    static Response live(TemplateInstance template) {
        return Response.fromResponse(page(200, template)).header("Cache-Control", "no-store").build();
    }

    /** {@code ?a=1&b=2} from the non-empty parameters in name order, or "" when there are none. */
    static String query(Map<String, String> parameters) {
        String joined = parameters.entrySet().stream().filter(entry -> entry.getValue() != null && !entry.getValue().isEmpty())
                .sorted(Map.Entry.comparingByKey())
                .map(entry -> entry.getKey() + "=" + URLEncoder.encode(entry.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return joined.isEmpty() ? "" : "?" + joined;
    }

    static boolean blank(String text) {
        return text == null || text.isBlank();
    }

    static String trim(String text) {
        return text == null ? "" : text.strip();
    }

    static String emptyToNull(String text) {
        return text.isEmpty() ? null : text;
    }
}
