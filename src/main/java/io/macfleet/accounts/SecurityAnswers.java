package io.macfleet.accounts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.problem.Problem;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.core.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a request gets when it is not signed in (401) or its role is too low (403): browsers on console pages get
 * sent to the login page or a page saying what is missing; API clients get an RFC 9457 problem JSON body.
 */
final class SecurityAnswers {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One answer, written either through Vert.x (authentication failures) or JAX-RS (exception mappers). */
    record Answer(int status, Map<String, String> headers, String contentType, String body) {
        Response response() {
            Response.ResponseBuilder builder = Response.status(status).type(contentType).entity(body);
            headers.forEach(builder::header);
            return builder.build();
        }

        void send(RoutingContext context) {
            var response = context.response().setStatusCode(status);
            headers.forEach(response::putHeader);
            response.putHeader("Content-Type", contentType).putHeader("Cache-Control", "no-store").end(body);
        }
    }

    private SecurityAnswers() {
    }

    /** Pages for people; everything else (the API) answers in JSON. */
    static boolean browserPath(String path) {
        return path.equals("/console") || path.startsWith("/console/") || path.equals("/account") || path.startsWith("/login")
                || path.startsWith("/logout");
    }

    static void unauthenticated(RoutingContext context, boolean hasAccounts, String badToken) {
        unauthenticated(context.normalizedPath(), context.request().query(), context.request().getHeader("HX-Request") != null, hasAccounts, badToken)
                .send(context);
    }

    static Answer unauthenticated(String path, String query, boolean htmx, boolean hasAccounts, String badToken) {
        if (browserPath(path) && badToken == null) {
            String next = path + (query == null || query.isEmpty() ? "" : "?" + query);
            String login = "/login?next=" + URLEncoder.encode(next, StandardCharsets.UTF_8);
            if (htmx) {
                // htmx would swap a redirected login page into a fragment: ask it to load the page instead.
                return new Answer(401, Map.of("HX-Redirect", login), "text/plain; charset=UTF-8", "sign in at " + login);
            }
            return new Answer(303, Map.of("Location", login), "text/plain; charset=UTF-8", "sign in at " + login);
        }
        String detail = badToken != null ? badToken
                : hasAccounts ? "sign in: send an API token (Authorization: Bearer ...) or the session cookie from /login"
                : AccountService.NO_ACCOUNTS_YET;
        return problem(401, "Unauthorized", detail, path, Map.of("WWW-Authenticate", "Bearer realm=\"macfleet\""));
    }

    static Answer forbidden(String path, CurrentUser user, String why) {
        if (browserPath(path)) {
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("user", user.name());
            data.put("role", user.roleName());
            data.put("why", why);
            data.put("path", path);
            return new Answer(403, Map.of(), "text/html; charset=UTF-8", Pages.render("forbidden", data));
        }
        return problem(403, "Forbidden", why, path, Map.of());
    }

    static Answer problem(int status, String title, String detail, String path, Map<String, String> headers) {
        try {
            return new Answer(status, headers, Problem.MEDIA_TYPE, JSON.writeValueAsString(new Problem("about:blank", title, status, detail, path)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
