package io.macfleet.simulator.mdm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * A NanoHUB-compatible MDM server for the simulator: the same API paths, HTTP Basic auth (user {@code nanohub}, the
 * API key as password), status codes and bodies as micromdm/nanohub with KMFDDM and NanoMDM inside (see
 * src/test/resources/nanohub/SOURCES.md for where each comes from). Enrolled {@link SimulatedMdmDevice}s stand for the
 * Macs; a change to their declarations notifies them as KMFDDM's notifier does (unless {@code nonotify}), and they
 * report status back through the store. It counts every declaration write, delivery and command, so a campaign can be
 * shown never to send one twice.
 */
public final class SimulatedNanoHub implements MdmDevices, AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String DDM = "/api/v1/ddm";
    private static final String NANOMDM = "/api/v1/nanomdm";

    /** Ways the server itself can misbehave, for client tests. */
    public enum ServerFault { NONE, INTERNAL_ERROR, GARBAGE, HANG }

    /** One command enqueued through the API, per enrollment. */
    public record EnqueuedCommand(String enrollmentId, String commandUuid, String requestType) {
    }

    private final HttpServer server;
    private final ExecutorService handlers = Executors.newVirtualThreadPerTaskExecutor();
    private final ScheduledExecutorService ticks;
    private final byte[] expectedAuthorization;
    private final UpdateTimings timings;
    private final UpdateCatalog catalog = new UpdateCatalog();
    private final DdmStore store = new DdmStore();
    private final Map<String, SimulatedMdmDevice> devices = new ConcurrentHashMap<>();
    private final Map<String, ScheduledFuture<?>> tickers = new ConcurrentHashMap<>();
    private final List<EnqueuedCommand> commands = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile ServerFault fault = ServerFault.NONE;

    /**
     * Listens on {@code host} (a loopback address) and {@code port} (0: any free one) until {@link #close()}.
     *
     * @param apiKey the password clients must send with user {@code nanohub}
     */
    public SimulatedNanoHub(String host, int port, String apiKey, UpdateTimings timings) {
        this.timings = timings;
        this.expectedAuthorization = ("Basic " + Base64.getEncoder().encodeToString(("nanohub:" + apiKey).getBytes(StandardCharsets.UTF_8)))
                .getBytes(StandardCharsets.UTF_8);
        try {
            server = HttpServer.create(new InetSocketAddress(host, port), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("simulated NanoHUB cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
        }
        server.setExecutor(handlers);
        server.createContext("/", this::handle);
        ticks = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "simulated-nanohub-devices");
            thread.setDaemon(true);
            return thread;
        });
        server.start();
    }

    public URI url() {
        return URI.create("http://" + server.getAddress().getHostString() + ":" + server.getAddress().getPort());
    }

    public UpdateCatalog catalog() {
        return catalog;
    }

    public void setFault(ServerFault fault) {
        this.fault = fault;
    }

    /** Enrolls a Mac: from now on its MDM client checks in every tick. */
    public SimulatedMdmDevice enroll(String enrollmentId, DeviceHost host) {
        SimulatedMdmDevice device = new SimulatedMdmDevice(enrollmentId, host, timings, catalog, new StoreChannel(enrollmentId, store));
        if (devices.putIfAbsent(enrollmentId, device) != null) {
            throw new IllegalArgumentException("enrollment " + enrollmentId + " is already enrolled");
        }
        tickers.put(enrollmentId, ticks.scheduleWithFixedDelay(() -> {
            try {
                device.tick();
            } catch (RuntimeException e) {
                System.err.println("simulated MDM client " + enrollmentId + ": " + e);
            }
        }, 0, timings.tick().toMillis(), TimeUnit.MILLISECONDS));
        return device;
    }

    public SimulatedMdmDevice device(String enrollmentId) {
        SimulatedMdmDevice device = devices.get(enrollmentId);
        if (device == null) {
            throw new IllegalArgumentException("no simulated device enrolled as " + enrollmentId + " (enrolled: " + devices.keySet() + ")");
        }
        return device;
    }

    // ---- counters for tests ----

    /** Identifiers of every PUT /declarations received, in order, changed or not. */
    public List<String> declarationWrites() {
        return store.declarationWrites();
    }

    /** Identifiers of the PUTs that stored something new (answered 204). */
    public List<String> declarationChanges() {
        return store.declarationChanges();
    }

    /** Each declaration added to a set ({@code set<-identifier}), counted only when it was not there yet (a 204). */
    public List<String> setChanges() {
        return store.setChanges();
    }

    /** Each set assigned to an enrollment ({@code enrollment<-set}), counted only when new (a 204, which syncs the device). */
    public List<String> assignmentChanges() {
        return store.assignmentChanges();
    }

    /** Every declaration revision a device fetched: a revision delivered twice to one device would show twice. */
    public List<String> deliveries(String enrollmentId) {
        return store.deliveries().stream().filter(delivery -> delivery.enrollmentId().equals(enrollmentId))
                .map(delivery -> delivery.identifier() + "@" + delivery.serverToken()).toList();
    }

    public List<EnqueuedCommand> commands() {
        return List.copyOf(commands);
    }

    @Override
    public void close() {
        server.stop(0);
        ticks.shutdownNow();
        handlers.shutdownNow();
    }

    // ---- HTTP ----

    private record Answer(int status, String contentType, String body, Map<String, String> headers) {
        static Answer json(int status, Object value) {
            return new Answer(status, "application/json", JSON.valueToTree(value).toString() + "\n", Map.of());
        }

        /** KMFDDM's jsonError: {"error": "..."} with a status. */
        static Answer error(int status, String message) {
            return new Answer(status, "application/json", JSON.createObjectNode().put("error", message).toString() + "\n", Map.of());
        }

        /** Go's http.Error(w, http.StatusText(s), s), which 204 and 304 send without a body. */
        static Answer status(int status) {
            return new Answer(status, "text/plain; charset=utf-8", status == 204 || status == 304 ? "" : reason(status) + "\n", Map.of());
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            Answer answer;
            try {
                answer = route(exchange);
            } catch (RuntimeException e) {
                answer = Answer.error(500, e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
            }
            if (answer == null) {
                return;
            }
            answer.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
            byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
            if (body.length > 0) {
                exchange.getResponseHeaders().set("Content-Type", answer.contentType());
            }
            exchange.sendResponseHeaders(answer.status(), body.length == 0 ? -1 : body.length);
            if (body.length > 0) {
                exchange.getResponseBody().write(body);
            }
        }
    }

    private Answer route(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getRawPath();
        String method = exchange.getRequestMethod();
        Map<String, List<String>> query = query(exchange.getRequestURI().getRawQuery());
        byte[] body = exchange.getRequestBody().readAllBytes();
        if (path.equals("/version") && method.equals("GET")) {
            return Answer.json(200, Map.of("version", "simulated"));
        }
        if (!path.startsWith("/api/v1/")) {
            return new Answer(404, "text/plain; charset=utf-8", "404 page not found\n", Map.of());
        }
        if (!authorized(exchange.getRequestHeaders().getFirst("Authorization"))) {
            return new Answer(401, "text/plain; charset=utf-8", "Unauthorized\n", Map.of("Www-Authenticate", "Basic realm=\"NanoHUB API\""));
        }
        switch (fault) {
            case INTERNAL_ERROR -> {
                return Answer.error(500, "simulated storage failure");
            }
            case GARBAGE -> {
                return new Answer(200, "application/json", "<html><body>502 Bad Gateway</body></html>", Map.of());
            }
            case HANG -> {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return null;
            }
            case NONE -> {
            }
        }
        boolean notify = !boolish(first(query, "nonotify"));
        if (path.startsWith(DDM + "/")) {
            return ddm(method, path.substring(DDM.length()), query, body, notify);
        }
        if (path.startsWith(NANOMDM + "/enqueue/") && method.equals("PUT")) {
            return enqueue(ids(path.substring((NANOMDM + "/enqueue/").length())), body);
        }
        return new Answer(404, "text/plain; charset=utf-8", "404 page not found\n", Map.of());
    }

    private Answer ddm(String method, String path, Map<String, List<String>> query, byte[] body, boolean notify) throws IOException {
        String[] parts = path.substring(1).split("/", 2);
        String resource = parts[0];
        String id = parts.length > 1 ? URLDecoder.decode(parts[1], StandardCharsets.UTF_8) : "";
        switch (resource + " " + method) {
            case "declarations PUT" -> {
                if (!id.isEmpty()) {
                    return Answer.status(405);
                }
                JsonNode declaration;
                try {
                    declaration = JSON.readTree(body);
                } catch (IOException e) {
                    return Answer.error(400, "invalid character in declaration JSON");
                }
                if (declaration == null || !declaration.path("Identifier").isTextual() || declaration.path("Identifier").asText().isEmpty()
                        || !declaration.path("Type").isTextual() || declaration.path("Type").asText().isEmpty() || !declaration.path("Payload").isObject()) {
                    return Answer.error(400, "invalid declaration");
                }
                String identifier = declaration.path("Identifier").asText();
                boolean changed = store.putDeclaration(declaration.path("Type").asText(), identifier, (ObjectNode) declaration.path("Payload"));
                if (changed && notify) {
                    store.setsHolding(identifier).forEach(set -> store.enrollmentsWithSet(set).forEach(this::notifyDevice));
                }
                return Answer.status(changed ? 204 : 304);
            }
            case "declarations GET" -> {
                if (id.isEmpty()) {
                    return Answer.json(200, store.declarationIdentifiers());
                }
                return store.declaration(id).map(stored -> {
                    ObjectNode node = JSON.createObjectNode();
                    node.put("Type", stored.type());
                    node.put("Identifier", stored.identifier());
                    node.set("Payload", stored.payload());
                    node.put("ServerToken", stored.serverToken());
                    return new Answer(200, "application/json", node.toString(), Map.of());
                }).orElse(Answer.error(404, "declaration not found"));
            }
            case "set-declarations PUT", "set-declarations DELETE" -> {
                String declaration = first(query, "declaration");
                if (declaration.isEmpty()) {
                    return Answer.error(500, "empty declaration");
                }
                boolean changed = method.equals("PUT") ? store.addToSet(id, declaration) : store.removeFromSet(id, declaration);
                if (changed && notify) {
                    store.enrollmentsWithSet(id).forEach(this::notifyDevice);
                }
                return Answer.status(changed ? 204 : 304);
            }
            case "declarations DELETE" -> {
                // KMFDDM assumes a deleted declaration is in no set and notifies nobody.
                return Answer.status(store.deleteDeclaration(id) ? 204 : 304);
            }
            case "sets GET" -> {
                return Answer.json(200, store.setNames());
            }
            case "notify POST" -> {
                for (String declaration : query.getOrDefault("declaration", List.of())) {
                    store.setsHolding(declaration).forEach(set -> store.enrollmentsWithSet(set).forEach(this::notifyDevice));
                }
                for (String set : query.getOrDefault("set", List.of())) {
                    store.enrollmentsWithSet(set).forEach(this::notifyDevice);
                }
                query.getOrDefault("id", List.of()).forEach(this::notifyDevice);
                return Answer.status(204);
            }
            case "set-declarations GET" -> {
                return Answer.json(200, store.setMembers(id));
            }
            case "enrollment-sets PUT", "enrollment-sets DELETE" -> {
                String set = first(query, "set");
                if (set.isEmpty()) {
                    return Answer.error(500, "empty set name");
                }
                boolean changed = method.equals("PUT") ? store.assignSet(id, set) : store.unassignSet(id, set);
                if (changed && notify) {
                    notifyDevice(id);
                }
                return Answer.status(changed ? 204 : 304);
            }
            case "enrollment-sets GET" -> {
                return Answer.json(200, store.enrollmentSets(id));
            }
            case "declaration-status GET" -> {
                ObjectNode result = JSON.createObjectNode();
                for (String enrollmentId : ids(parts.length > 1 ? parts[1] : "")) {
                    if (!store.knowsStatusOf(enrollmentId)) {
                        continue;
                    }
                    ArrayNode list = result.putArray(enrollmentId);
                    for (DdmStore.ReportedDeclaration reported : store.declarationStatus(enrollmentId)) {
                        ObjectNode entry = list.addObject();
                        entry.put("identifier", reported.identifier());
                        entry.put("active", reported.active());
                        entry.put("valid", reported.valid());
                        entry.put("server-token", reported.serverToken());
                        entry.put("current", store.declaration(reported.identifier()).map(d -> d.serverToken().equals(reported.serverToken())).orElse(false));
                        entry.put("status_received", reported.received().toString());
                        entry.put("status_id", reported.statusId());
                        if (reported.reasons() != null && reported.reasons().isArray() && !reported.reasons().isEmpty()) {
                            entry.set("reasons", reported.reasons());
                        }
                    }
                }
                return new Answer(200, "application/json", result.toString() + "\n", Map.of());
            }
            case "status-values GET" -> {
                ObjectNode result = JSON.createObjectNode();
                for (String enrollmentId : ids(parts.length > 1 ? parts[1] : "")) {
                    List<DdmStore.ExtractedValue> values = store.values(enrollmentId, first(query, "prefix"));
                    if (values.isEmpty()) {
                        continue;
                    }
                    ArrayNode list = result.putArray(enrollmentId);
                    for (DdmStore.ExtractedValue value : values) {
                        list.addObject().put("path", value.path()).put("value", value.value()).put("timestamp", value.timestamp().toString())
                                .put("status_id", value.statusId());
                    }
                }
                return new Answer(200, "application/json", result.toString() + "\n", Map.of());
            }
            case "status-report GET" -> {
                int index;
                try {
                    index = Integer.parseInt(first(query, "index").isEmpty() ? "0" : first(query, "index"));
                } catch (NumberFormatException e) {
                    return Answer.error(400, "strconv.ParseInt: parsing \"" + first(query, "index") + "\": invalid syntax");
                }
                int count = store.reportCount(id);
                if (count == 0) {
                    // As the real NanoHUB with file storage answers (observed, RealNanoHubFailuresTest): a 500, not a 404.
                    return Answer.error(500, "getting rs." + id + ".0.raw: key not found: rs." + id + ".0.raw");
                }
                Optional<DdmStore.StoredReport> report = store.report(id, index);
                if (report.isEmpty()) {
                    return Answer.error(500, "index out of range: " + (index < 0 ? "too low" : "too high") + " (" + index + ")");
                }
                Map<String, String> headers = new LinkedHashMap<>();
                headers.put("Last-Modified", DateTimeFormatter.RFC_1123_DATE_TIME.format(report.get().received().atOffset(ZoneOffset.UTC)));
                headers.put("X-Status-Report-Index", String.valueOf(count - 1 - index));
                headers.put("X-Status-Report-ID", report.get().statusId());
                return new Answer(200, "application/json", report.get().raw(), headers);
            }
            default -> {
                return new Answer(404, "text/plain; charset=utf-8", "404 page not found\n", Map.of());
            }
        }
    }

    /** NanoMDM's enqueue: 200 all queued, 207 some, 500 none; the JSON is its APIResult. */
    private Answer enqueue(List<String> enrollmentIds, byte[] body) {
        String requestType;
        String commandUuid;
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            // A command plist names Apple's DTD; never fetch it (or anything else a body points at).
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            factory.setFeature("http://xml.org/sax/features/external-general-entities", false);
            factory.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
            Element top = (Element) factory.newDocumentBuilder().parse(new ByteArrayInputStream(body))
                    .getDocumentElement().getElementsByTagName("dict").item(0);
            Map<String, Node> plist = CheckInChannel.dictionary(top);
            commandUuid = plist.get("CommandUUID").getTextContent();
            requestType = CheckInChannel.dictionary((Element) plist.get("Command")).get("RequestType").getTextContent();
        } catch (Exception e) {
            ObjectNode result = JSON.createObjectNode().put("command_error", "decoding command: " + e.getClass().getSimpleName());
            return new Answer(500, "application/json", result.toString() + "\n", Map.of());
        }
        ObjectNode result = JSON.createObjectNode();
        ObjectNode status = result.putObject("status");
        int queued = 0;
        for (String enrollmentId : enrollmentIds) {
            SimulatedMdmDevice device = devices.get(enrollmentId);
            if (device == null) {
                status.putObject(enrollmentId).put("push_error", "retrieving push info: enrollment not found: " + enrollmentId);
                continue;
            }
            commands.add(new EnqueuedCommand(enrollmentId, commandUuid, requestType));
            device.receive(new SimulatedMdmDevice.ReceivedCommand(commandUuid, requestType));
            status.putObject(enrollmentId).put("push_result", pushId(enrollmentId, commandUuid));
            queued++;
        }
        result.put("command_uuid", commandUuid);
        result.put("request_type", requestType);
        int code = queued == enrollmentIds.size() ? 200 : queued == 0 ? 500 : 207;
        return new Answer(code, "application/json", result.toString() + "\n", Map.of());
    }

    private void notifyDevice(String enrollmentId) {
        SimulatedMdmDevice device = devices.get(enrollmentId);
        if (device != null) {
            device.requestSync();
        }
    }

    private boolean authorized(String header) {
        return header != null && MessageDigest.isEqual(header.getBytes(StandardCharsets.UTF_8), expectedAuthorization);
    }

    private static String pushId(String enrollmentId, String commandUuid) {
        return UUID.nameUUIDFromBytes((enrollmentId + commandUuid).getBytes(StandardCharsets.UTF_8)).toString().toUpperCase(java.util.Locale.ROOT);
    }

    private static List<String> ids(String rawSegment) {
        List<String> ids = new ArrayList<>();
        for (String part : rawSegment.split(",")) {
            if (!part.isEmpty()) {
                ids.add(URLDecoder.decode(part, StandardCharsets.UTF_8));
            }
        }
        return ids;
    }

    private static Map<String, List<String>> query(String raw) {
        Map<String, List<String>> parameters = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return parameters;
        }
        for (String pair : raw.split("&")) {
            int equals = pair.indexOf('=');
            String name = URLDecoder.decode(equals < 0 ? pair : pair.substring(0, equals), StandardCharsets.UTF_8);
            String value = equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
            parameters.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
        }
        return parameters;
    }

    private static String first(Map<String, List<String>> query, String name) {
        List<String> values = query.get(name);
        return values == null || values.isEmpty() ? "" : values.getFirst();
    }

    /** KMFDDM's boolish: "", 0, false, no, off are false. */
    private static boolean boolish(String value) {
        return switch (value.toLowerCase(java.util.Locale.ROOT)) {
            case "", "0", "false", "no", "off" -> false;
            default -> true;
        };
    }

    private static String reason(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            default -> "Status " + status;
        };
    }
}
