package io.macfleet.mdm.nanohub;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.macfleet.mdm.Change;
import io.macfleet.mdm.Declaration;
import io.macfleet.mdm.DeclarationStatus;
import io.macfleet.mdm.DeclarativeManagement;
import io.macfleet.mdm.EnqueueResult;
import io.macfleet.mdm.EnrollmentState;
import io.macfleet.mdm.MdmCommand;
import io.macfleet.mdm.MdmServerException;
import io.macfleet.mdm.MdmServerException.Problem;
import io.macfleet.mdm.SoftwareUpdateStatus;
import io.macfleet.mdm.StatusReason;
import io.macfleet.mdm.StatusReport;
import io.macfleet.mdm.StatusValue;
import io.macfleet.secrets.SecretReference;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * NanoHUB's HTTP API (micromdm/nanohub, which mounts KMFDDM at {@code /api/v1/ddm} and NanoMDM at
 * {@code /api/v1/nanomdm}), as its code behaves: HTTP Basic with user {@code nanohub} and the API key as password
 * ({@code cmd/nanohub/nanohub.go}); KMFDDM's handlers ({@code http/api/*.go}) answer 204 for a change and 304 for
 * none (its openapi.yaml has the two descriptions swapped), and report handler errors as 500 with
 * {@code {"error": "..."}}.
 *
 * <p>Status items: KMFDDM extracts values only under {@code .StatusItems.management.} and
 * {@code .StatusItems.device.} ({@code ddm/status.go}, {@code RegisterStatusHandlers}); {@code softwareupdate.*}
 * items stay in the raw status reports, which are incremental. {@link #softwareUpdateStatus} therefore pages back
 * through the reports, newest first, until it has each item or the reports end, and reads the OS version from the extracted values.
 *
 * <p>Every request is bounded by one deadline covering connect, headers and body, so a hung server costs that much
 * once.
 */
public final class NanoHubClient implements DeclarativeManagement, AutoCloseable {
    /**
     * How many raw status reports {@link #softwareUpdateStatus} pages back at most (newest first) until it has every
     * item. Reports are incremental, so a quiet Mac's install-state can sit far back: a fixed window of 16 read it as
     * "not reported" once other items had changed 16 times. This bound only stops a runaway on a server that never
     * says "no more".
     */
    static final int STATUS_REPORTS_SCANNED = 10_000;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String USER = "nanohub";

    private final URI base;
    private final String authorization;
    private final Duration deadline;
    private final HttpClient http;
    private final String name;

    /**
     * @param baseUrl  NanoHUB's root, e.g. {@code https://mdm.example.com:9004}
     * @param apiKey   where the API key lives ({@code env:} or {@code file:}); read once, here
     * @param deadline the most one request may take, start to end
     */
    public NanoHubClient(URI baseUrl, SecretReference apiKey, Duration deadline) {
        this(baseUrl, apiKey.resolve().strip(), deadline);
    }

    NanoHubClient(URI baseUrl, String apiKey, Duration deadline) {
        String text = baseUrl.toString();
        this.base = URI.create(text.endsWith("/") ? text.substring(0, text.length() - 1) : text);
        if (!"http".equals(base.getScheme()) && !"https".equals(base.getScheme())) {
            throw new IllegalArgumentException("NanoHUB URL must be http:// or https://, got " + baseUrl);
        }
        this.authorization = "Basic " + Base64.getEncoder().encodeToString((USER + ":" + apiKey).getBytes(StandardCharsets.UTF_8));
        this.deadline = deadline;
        this.name = "nanohub " + base;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(deadline).followRedirects(HttpClient.Redirect.NEVER).build();
    }

    @Override
    public String describe() {
        return name;
    }

    /** Ends the HTTP client's connections and threads. */
    @Override
    public void close() {
        http.close();
    }

    // ---- KMFDDM: declarations, sets, enrollments ----

    @Override
    public Change putDeclaration(Declaration declaration) {
        ObjectNode body = JSON.createObjectNode();
        body.put("Type", declaration.type());
        body.put("Identifier", declaration.identifier());
        body.set("Payload", declaration.payload());
        return change(send("PUT", "/api/v1/ddm/declarations", body.toString(), "application/json", true));
    }

    @Override
    public Change addToSet(String set, String declarationIdentifier) {
        return change(send("PUT", "/api/v1/ddm/set-declarations/" + segment(set) + "?declaration=" + query(declarationIdentifier), null, null, true));
    }

    @Override
    public Change assignSet(String enrollmentId, String set) {
        return change(send("PUT", "/api/v1/ddm/enrollment-sets/" + segment(enrollmentId) + "?set=" + query(set), null, null, true));
    }

    @Override
    public List<DeclarationStatus> declarationStatus(List<String> enrollmentIds) {
        Reply reply = send("GET", "/api/v1/ddm/declaration-status/" + segments(enrollmentIds), null, null);
        return parseDeclarationStatus(reply.request(), expectJson(reply));
    }

    @Override
    public List<StatusValue> statusValues(List<String> enrollmentIds, String pathPrefix) {
        String path = "/api/v1/ddm/status-values/" + segments(enrollmentIds) + (pathPrefix.isEmpty() ? "" : "?prefix=" + query(pathPrefix));
        Reply reply = send("GET", path, null, null);
        return parseStatusValues(reply.request(), expectJson(reply));
    }

    @Override
    public Optional<StatusReport> statusReport(String enrollmentId, int index) {
        Reply reply = send("GET", "/api/v1/ddm/status-report/" + segment(enrollmentId) + "?index=" + index, null, null, true);
        if (reply.status() == 404 || (reply.status() == 500 && reportOutOfRange(reply.body()))) {
            // KMFDDM's kv storage answers a too-high index with 500 "index out of range"; others with 404.
            return Optional.empty();
        }
        JsonNode body = expectJson(reply);
        if (!body.isObject()) {
            throw new MdmServerException(Problem.MALFORMED_RESPONSE, name, reply.request(), "a status report is a JSON object, got " + body.getNodeType());
        }
        Optional<String> statusId = reply.header("X-Status-Report-ID");
        Optional<Instant> received = reply.header("Last-Modified").flatMap(NanoHubClient::httpDate);
        return Optional.of(new StatusReport(enrollmentId, index, statusId, received, body));
    }

    @Override
    public SoftwareUpdateStatus softwareUpdateStatus(String enrollmentId) {
        SoftwareUpdateItems found = new SoftwareUpdateItems();
        for (int index = 0; index < STATUS_REPORTS_SCANNED && !found.complete(); index++) {
            Optional<StatusReport> report = statusReport(enrollmentId, index);
            if (report.isEmpty()) {
                break;
            }
            found.takeMissingFrom(report.get().body().path("StatusItems"));
        }
        if (found.osVersion.isEmpty() || found.buildVersion.isEmpty()) {
            for (StatusValue value : statusValues(List.of(enrollmentId), ".StatusItems.device.operating-system.%")) {
                if (value.path().equals(".StatusItems.device.operating-system.version") && found.osVersion.isEmpty()) {
                    found.osVersion = Optional.of(value.value());
                } else if (value.path().equals(".StatusItems.device.operating-system.build-version") && found.buildVersion.isEmpty()) {
                    found.buildVersion = Optional.of(value.value());
                }
            }
        }
        return new SoftwareUpdateStatus(enrollmentId, found.installState, found.pendingVersion, found.failureReason,
                found.osVersion, found.buildVersion);
    }

    @Override
    public EnrollmentState enrollment(String enrollmentId) {
        Optional<StatusReport> newest = statusReport(enrollmentId, 0);
        // NanoMDM keeps the bootstrap token in its storage but no NanoHUB API reads it (nanomdm http/api, nanocmd's
        // inventory keys), so the server cannot tell; the preflight asks the Mac instead.
        return new EnrollmentState(enrollmentId, newest.isPresent(), newest.flatMap(StatusReport::received),
                EnrollmentState.BootstrapToken.NOT_EXPOSED_BY_SERVER);
    }

    // ---- NanoMDM: raw commands ----

    @Override
    public EnqueueResult enqueue(List<String> enrollmentIds, MdmCommand command) {
        Reply reply = send("PUT", "/api/v1/nanomdm/enqueue/" + segments(enrollmentIds), CommandPlist.encode(command), "text/xml", true);
        if (reply.status() != 200 && reply.status() != 207 && reply.status() != 500) {
            throw statusProblem(reply);
        }
        // NanoMDM answers all three with its APIResult JSON (api/types.go). A push error alone means the command IS
        // queued (NanoMDM stores it before it pushes) and answers 500 all the same; only command_error means it is not.
        JsonNode body;
        try {
            body = expectJson(new Reply(reply.request(), 200, reply.body(), reply.headers()));
        } catch (MdmServerException e) {
            throw reply.status() == 500 ? statusProblem(reply) : e;
        }
        EnqueueResult result = parseEnqueue(reply.request(), body, command, enrollmentIds);
        String commandError = body.path("command_error").asText("");
        if (!commandError.isEmpty()) {
            throw new MdmServerException(Problem.SERVER_ERROR, name, reply.request(), command.requestType() + " was not queued: " + commandError);
        }
        if (!result.enrollments().isEmpty() && result.enrollments().stream().noneMatch(EnqueueResult.PerEnrollment::queued)) {
            throw new MdmServerException(Problem.SERVER_ERROR, name, reply.request(), command.requestType() + " was queued for no enrollment: "
                    + result.enrollments().stream().map(one -> one.enrollmentId() + " " + one.describe()).toList());
        }
        return result;
    }

    // ---- parsing (package-private: tested against NanoHUB's and KMFDDM's own recorded shapes) ----

    List<DeclarationStatus> parseDeclarationStatus(String request, JsonNode body) {
        List<DeclarationStatus> statuses = new ArrayList<>();
        for (Map.Entry<String, JsonNode> entry : objectEntries(request, body)) {
            for (JsonNode item : array(request, entry.getValue(), "declaration status of " + entry.getKey())) {
                statuses.add(new DeclarationStatus(entry.getKey(), text(request, item, "identifier"), item.path("active").asBoolean(false),
                        DeclarationStatus.Validity.of(item.path("valid").asText("")), item.path("server-token").asText(""),
                        item.path("current").asBoolean(false), instant(item.path("status_received")), reasons(item.path("reasons"))));
            }
        }
        return statuses;
    }

    List<StatusValue> parseStatusValues(String request, JsonNode body) {
        List<StatusValue> values = new ArrayList<>();
        for (Map.Entry<String, JsonNode> entry : objectEntries(request, body)) {
            for (JsonNode item : array(request, entry.getValue(), "status values of " + entry.getKey())) {
                values.add(new StatusValue(entry.getKey(), text(request, item, "path"), item.path("value").asText(""), instant(item.path("timestamp"))));
            }
        }
        return values;
    }

    EnqueueResult parseEnqueue(String request, JsonNode body, MdmCommand command) {
        return parseEnqueue(request, body, command, List.of());
    }

    /** Enrollments NanoMDM's answer does not list individually share its top-level errors (a failed push of all). */
    EnqueueResult parseEnqueue(String request, JsonNode body, MdmCommand command, List<String> enrollmentIds) {
        if (!body.isObject()) {
            throw new MdmServerException(Problem.MALFORMED_RESPONSE, name, request, "expected a JSON object, got " + body.getNodeType());
        }
        List<EnqueueResult.PerEnrollment> per = new ArrayList<>();
        Optional<String> overallPushError = optionalText(body.path("push_error"));
        JsonNode status = body.path("status");
        if (status.isObject()) {
            for (Map.Entry<String, JsonNode> entry : status.properties()) {
                JsonNode result = entry.getValue();
                per.add(new EnqueueResult.PerEnrollment(entry.getKey(), optionalText(result.path("push_result")),
                        optionalText(result.path("push_error")).or(() -> overallPushError), optionalText(result.path("command_error"))));
            }
        }
        Optional<String> overallCommandError = optionalText(body.path("command_error"));
        for (String enrollmentId : enrollmentIds) {
            if (per.stream().noneMatch(one -> one.enrollmentId().equals(enrollmentId))) {
                per.add(new EnqueueResult.PerEnrollment(enrollmentId, Optional.empty(), overallPushError, overallCommandError));
            }
        }
        return new EnqueueResult(body.path("command_uuid").asText(command.commandUuid()), body.path("request_type").asText(command.requestType()), per);
    }

    private static List<StatusReason> reasons(JsonNode reasons) {
        List<StatusReason> list = new ArrayList<>();
        if (reasons.isArray()) {
            for (JsonNode reason : reasons) {
                JsonNode details = reason.path("details");
                list.add(new StatusReason(reason.path("code").asText(""), reason.path("description").asText(""),
                        details.isMissingNode() || details.isNull() ? "" : details.toString()));
            }
        }
        return list;
    }

    /** The five items, each taken from the newest report that has it. */
    private static final class SoftwareUpdateItems {
        Optional<SoftwareUpdateStatus.InstallState> installState = Optional.empty();
        Optional<SoftwareUpdateStatus.PendingVersion> pendingVersion = Optional.empty();
        Optional<SoftwareUpdateStatus.FailureReason> failureReason = Optional.empty();
        Optional<String> osVersion = Optional.empty();
        Optional<String> buildVersion = Optional.empty();

        boolean complete() {
            return installState.isPresent() && pendingVersion.isPresent() && failureReason.isPresent() && osVersion.isPresent()
                    && buildVersion.isPresent();
        }

        void takeMissingFrom(JsonNode items) {
            JsonNode update = items.path("softwareupdate");
            if (installState.isEmpty() && update.path("install-state").isTextual()) {
                installState = Optional.of(SoftwareUpdateStatus.InstallState.of(update.path("install-state").asText()));
            }
            JsonNode pending = update.path("pending-version");
            if (pendingVersion.isEmpty() && pending.isObject()) {
                pendingVersion = Optional.of(new SoftwareUpdateStatus.PendingVersion(pending.path("os-version").asText(""),
                        pending.path("build-version").asText("")));
            }
            JsonNode failure = update.path("failure-reason");
            if (failureReason.isEmpty() && failure.isObject()) {
                failureReason = Optional.of(new SoftwareUpdateStatus.FailureReason(failure.path("count").asInt(0),
                        optionalText(failure.path("reason")), instant(failure.path("timestamp"))));
            }
            JsonNode system = items.path("device").path("operating-system");
            if (osVersion.isEmpty() && system.path("version").isTextual()) {
                osVersion = Optional.of(system.path("version").asText());
            }
            if (buildVersion.isEmpty() && system.path("build-version").isTextual()) {
                buildVersion = Optional.of(system.path("build-version").asText());
            }
        }
    }

    // ---- HTTP ----

    private record Reply(String request, int status, String body, java.net.http.HttpHeaders headers) {
        Optional<String> header(String header) {
            return headers.firstValue(header);
        }
    }

    private Reply send(String method, String pathAndQuery, String body, String contentType) {
        return send(method, pathAndQuery, body, contentType, false);
    }

    /**
     * One bounded exchange. Unless {@code caller} handles statuses itself, 401, 404, 4xx and 5xx become typed errors
     * here.
     */
    private Reply send(String method, String pathAndQuery, String body, String contentType, boolean caller) {
        String request = method + " " + pathAndQuery.replaceFirst("\\?.*", "");
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(base + pathAndQuery)).timeout(deadline)
                .header("Authorization", authorization).header("Accept", "application/json");
        if (contentType != null) {
            builder.header("Content-Type", contentType);
        }
        builder.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        CompletableFuture<HttpResponse<String>> future = http.sendAsync(builder.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        HttpResponse<String> response;
        try {
            // The request timeout covers the headers only; this bounds the body too (a server that trickles forever).
            response = future.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new MdmServerException(Problem.TIMEOUT, name, request, "gave up after " + deadline.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new MdmServerException(Problem.TIMEOUT, name, request, "interrupted while waiting", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof java.net.http.HttpTimeoutException) {
                throw new MdmServerException(Problem.TIMEOUT, name, request, "gave up after " + deadline.toMillis() + " ms", cause);
            }
            String what = cause instanceof ConnectException ? "connection refused" : cause.getClass().getSimpleName()
                    + (cause.getMessage() == null ? "" : " " + cause.getMessage());
            throw new MdmServerException(Problem.UNREACHABLE, name, request, what, cause);
        }
        Reply reply = new Reply(request, response.statusCode(), response.body() == null ? "" : response.body(), response.headers());
        if (!caller && reply.status() >= 400) {
            throw statusProblem(reply);
        }
        return reply;
    }

    private MdmServerException statusProblem(Reply reply) {
        int status = reply.status();
        String detail = "HTTP " + status + errorText(reply.body());
        Problem problem = status == 401 ? Problem.UNAUTHORIZED : status == 404 ? Problem.NOT_FOUND
                : status >= 500 ? Problem.SERVER_ERROR : status >= 400 ? Problem.REJECTED : Problem.UNEXPECTED_STATUS;
        return new MdmServerException(problem, name, reply.request(), detail);
    }

    /** KMFDDM's error body is {"error": "..."}; anything else is quoted briefly. */
    private static String errorText(String body) {
        if (body.isBlank()) {
            return "";
        }
        try {
            JsonNode node = JSON.readTree(body);
            if (node != null && node.path("error").isTextual()) {
                return ": " + node.path("error").asText();
            }
        } catch (JsonProcessingException e) {
            // not JSON: quoted below
        }
        String line = body.strip().lines().findFirst().orElse("");
        return ": \"" + (line.length() > 120 ? line.substring(0, 120) + "…" : line) + "\"";
    }

    private Change change(Reply reply) {
        return switch (reply.status()) {
            case 204 -> Change.CHANGED;
            // KMFDDM stores the change, then enqueues the DeclarativeManagement command and pushes; a failed push makes
            // the handler answer 500 "notify enrollment: enqueueing DM command: … push error: …" with the change stored.
            case 500 -> {
                String error = errorText(reply.body());
                if (error.contains("push error")) {
                    yield Change.pushFailed(error.replaceFirst("^: ", ""));
                }
                throw statusProblem(reply);
            }
            case 304 -> Change.UNCHANGED;
            default -> throw reply.status() >= 400 ? statusProblem(reply) : new MdmServerException(Problem.UNEXPECTED_STATUS, name, reply.request(),
                    "HTTP " + reply.status() + " (KMFDDM answers 204 for a change, 304 for none)" + errorText(reply.body()));
        };
    }

    private JsonNode expectJson(Reply reply) {
        if (reply.status() == 204) {
            // simpleJSONResourceHandler answers 204 when its storage returned nothing at all.
            return JSON.createObjectNode();
        }
        if (reply.status() != 200) {
            throw statusProblem(reply);
        }
        try {
            JsonNode node = JSON.readTree(reply.body());
            if (node == null || node.isMissingNode()) {
                throw new MdmServerException(Problem.MALFORMED_RESPONSE, name, reply.request(), "empty body where JSON was expected");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new MdmServerException(Problem.MALFORMED_RESPONSE, name, reply.request(),
                    "not JSON (" + e.getOriginalMessage() + ")" + errorText(reply.body()), e);
        }
    }

    private List<Map.Entry<String, JsonNode>> objectEntries(String request, JsonNode body) {
        if (!body.isObject()) {
            throw new MdmServerException(Problem.MALFORMED_RESPONSE, name, request, "expected a JSON object keyed by enrollment ID, got " + body.getNodeType());
        }
        List<Map.Entry<String, JsonNode>> entries = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
            entries.add(it.next());
        }
        return entries;
    }

    private Iterable<JsonNode> array(String request, JsonNode node, String what) {
        if (node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw new MdmServerException(Problem.MALFORMED_RESPONSE, name, request, what + " is not a JSON array but " + node.getNodeType());
        }
        return node;
    }

    private String text(String request, JsonNode item, String field) {
        JsonNode value = item.path(field);
        if (!value.isTextual()) {
            throw new MdmServerException(Problem.MALFORMED_RESPONSE, name, request, "an entry has no text field '" + field + "': " + abbreviate(item.toString()));
        }
        return value.asText();
    }

    private static String abbreviate(String text) {
        return text.length() > 160 ? text.substring(0, 160) + "…" : text;
    }

    private static Optional<String> optionalText(JsonNode node) {
        return node.isTextual() && !node.asText().isEmpty() ? Optional.of(node.asText()) : Optional.empty();
    }

    /** RFC 3339 timestamps; Go's zero time ("0001-01-01T00:00:00Z") means none. */
    static Optional<Instant> instant(JsonNode node) {
        if (!node.isTextual()) {
            return Optional.empty();
        }
        try {
            Instant instant = java.time.OffsetDateTime.parse(node.asText()).toInstant();
            return instant.isBefore(Instant.parse("0002-01-01T00:00:00Z")) ? Optional.empty() : Optional.of(instant);
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static Optional<Instant> httpDate(String text) {
        try {
            return Optional.of(java.time.ZonedDateTime.parse(text, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    /**
     * "No report at this index" as each storage says it: KMFDDM's handler answers 404 only when a storage returns
     * nothing; the file (kv) storage answers 500 "key not found" (no report yet) or "index out of range: too high", and
     * the MySQL storage 500 "sql: no rows in result set" (both observed against the real NanoHUB, RealNanoHubFailuresTest).
     */
    private static boolean reportOutOfRange(String body) {
        return body.contains("out of range") || body.contains("not found") || body.contains("no rows in result set");
    }

    private static String segment(String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("an empty identifier cannot be sent to NanoHUB");
        }
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Several IDs in one path segment, comma-separated (KMFDDM splits on ','; NanoMDM likewise). */
    private static String segments(List<String> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("no enrollment IDs given");
        }
        return String.join(",", values.stream().map(NanoHubClient::segment).toList());
    }

    private static String query(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
