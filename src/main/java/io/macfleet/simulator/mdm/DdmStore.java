package io.macfleet.simulator.mdm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * What KMFDDM stores, in memory: declarations with server tokens, sets, enrollment-set assignments, and per enrollment
 * the raw status reports, the last declaration statuses and the values extracted under {@code .StatusItems.management.}
 * and {@code .StatusItems.device.} only (as KMFDDM's {@code RegisterStatusHandlers} does). It also counts every write
 * and delivery, so tests can prove a declaration or command was never sent twice.
 */
final class DdmStore {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A stored declaration; the token changes exactly when Type or Payload change. */
    record StoredDeclaration(String type, String identifier, ObjectNode payload, String serverToken) {
    }

    record ReportedDeclaration(String identifier, String manifestType, boolean active, String valid, String serverToken,
                               JsonNode reasons, Instant received, String statusId) {
    }

    record ExtractedValue(String path, String value, Instant timestamp, String statusId) {
    }

    record StoredReport(String statusId, Instant received, String raw) {
    }

    /** One declaration revision a device fetched during a sync. */
    record Delivery(String enrollmentId, String identifier, String serverToken) {
    }

    private final Map<String, StoredDeclaration> declarations = new LinkedHashMap<>();
    private final Map<String, Set<String>> sets = new LinkedHashMap<>();
    private final Map<String, Set<String>> enrollmentSets = new LinkedHashMap<>();
    private final Map<String, List<StoredReport>> reports = new LinkedHashMap<>();
    private final Map<String, Map<String, ReportedDeclaration>> declarationStatus = new LinkedHashMap<>();
    private final Map<String, List<ExtractedValue>> values = new LinkedHashMap<>();
    private final List<String> declarationWrites = new ArrayList<>();
    private final List<String> declarationChanges = new ArrayList<>();
    private final List<Delivery> deliveries = new ArrayList<>();
    private final List<String> setChanges = new ArrayList<>();
    private final List<String> assignmentChanges = new ArrayList<>();

    // ---- declarations, sets, assignments ----

    /** @return true when new or changed (KMFDDM's 204), false when identical (304) */
    synchronized boolean putDeclaration(String type, String identifier, ObjectNode payload) {
        declarationWrites.add(identifier);
        String token = token(type, payload);
        StoredDeclaration existing = declarations.get(identifier);
        if (existing != null && existing.serverToken().equals(token)) {
            return false;
        }
        declarations.put(identifier, new StoredDeclaration(type, identifier, payload.deepCopy(), token));
        declarationChanges.add(identifier);
        return true;
    }

    synchronized Optional<StoredDeclaration> declaration(String identifier) {
        return Optional.ofNullable(declarations.get(identifier));
    }

    synchronized List<String> declarationIdentifiers() {
        return List.copyOf(declarations.keySet());
    }

    synchronized boolean deleteDeclaration(String identifier) {
        if (sets.values().stream().anyMatch(members -> members.contains(identifier))) {
            // KMFDDM's SQL storage refuses to delete a declaration a set still holds (foreign key).
            throw new IllegalStateException("declaration " + identifier + " is still in a set");
        }
        return declarations.remove(identifier) != null;
    }

    synchronized List<String> setNames() {
        return sets.entrySet().stream().filter(entry -> !entry.getValue().isEmpty()).map(Map.Entry::getKey).toList();
    }

    synchronized boolean addToSet(String set, String identifier) {
        if (!declarations.containsKey(identifier)) {
            // KMFDDM's SQL storage refuses a set member that is not a stored declaration (foreign key) with a 500.
            throw new IllegalStateException("declaration not found: " + identifier);
        }
        boolean added = sets.computeIfAbsent(set, name -> new LinkedHashSet<>()).add(identifier);
        if (added) {
            setChanges.add(set + "<-" + identifier);
        }
        return added;
    }

    synchronized boolean removeFromSet(String set, String identifier) {
        Set<String> members = sets.get(set);
        return members != null && members.remove(identifier);
    }

    synchronized List<String> setMembers(String set) {
        return List.copyOf(sets.getOrDefault(set, Set.of()));
    }

    synchronized boolean assignSet(String enrollmentId, String set) {
        boolean added = enrollmentSets.computeIfAbsent(enrollmentId, id -> new LinkedHashSet<>()).add(set);
        if (added) {
            assignmentChanges.add(enrollmentId + "<-" + set);
        }
        return added;
    }

    synchronized boolean unassignSet(String enrollmentId, String set) {
        Set<String> assigned = enrollmentSets.get(enrollmentId);
        return assigned != null && assigned.remove(set);
    }

    synchronized List<String> enrollmentSets(String enrollmentId) {
        return List.copyOf(enrollmentSets.getOrDefault(enrollmentId, Set.of()));
    }

    synchronized List<String> setsHolding(String identifier) {
        return sets.entrySet().stream().filter(entry -> entry.getValue().contains(identifier)).map(Map.Entry::getKey).toList();
    }

    synchronized List<String> enrollmentsWithSet(String set) {
        return enrollmentSets.entrySet().stream().filter(entry -> entry.getValue().contains(set)).map(Map.Entry::getKey).toList();
    }

    /** The declarations an enrollment gets: every member of every set assigned to it, once. */
    synchronized List<StoredDeclaration> deliver(String enrollmentId) {
        Set<String> identifiers = new LinkedHashSet<>();
        for (String set : enrollmentSets.getOrDefault(enrollmentId, Set.of())) {
            identifiers.addAll(sets.getOrDefault(set, Set.of()));
        }
        return identifiers.stream().map(declarations::get).filter(java.util.Objects::nonNull).toList();
    }

    synchronized void recordDelivery(String enrollmentId, StoredDeclaration declaration) {
        deliveries.add(new Delivery(enrollmentId, declaration.identifier(), declaration.serverToken()));
    }

    // ---- status channel ----

    /** Stores a status report as KMFDDM's status handler does. */
    synchronized void receiveStatus(String enrollmentId, ObjectNode report) {
        Instant now = Instant.now();
        String statusId = UUID.randomUUID().toString().substring(0, 16).replace("-", "");
        reports.computeIfAbsent(enrollmentId, id -> new ArrayList<>()).add(new StoredReport(statusId, now, report.toString()));
        JsonNode items = report.path("StatusItems");
        JsonNode declarationsItem = items.path("management").path("declarations");
        if (declarationsItem.isObject()) {
            Map<String, ReportedDeclaration> byIdentifier = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> manifest : declarationsItem.properties()) {
                for (JsonNode entry : manifest.getValue()) {
                    byIdentifier.put(entry.path("identifier").asText(), new ReportedDeclaration(entry.path("identifier").asText(),
                            manifest.getKey(), entry.path("active").asBoolean(), entry.path("valid").asText(),
                            entry.path("server-token").asText(), entry.path("reasons"), now, statusId));
                }
            }
            declarationStatus.put(enrollmentId, byIdentifier);
        }
        List<ExtractedValue> extracted = new ArrayList<>();
        JsonNode management = items.path("management");
        for (Map.Entry<String, JsonNode> child : management.properties()) {
            if (!child.getKey().equals("declarations")) {
                flatten(".StatusItems.management." + child.getKey(), child.getValue(), now, statusId, extracted);
            }
        }
        if (items.path("device").isObject()) {
            flatten(".StatusItems.device", items.path("device"), now, statusId, extracted);
        }
        if (!extracted.isEmpty()) {
            List<ExtractedValue> kept = values.computeIfAbsent(enrollmentId, id -> new ArrayList<>());
            Set<String> replacedPaths = new LinkedHashSet<>();
            extracted.forEach(value -> replacedPaths.add(value.path()));
            kept.removeIf(value -> replacedPaths.contains(value.path()));
            kept.addAll(extracted);
        }
    }

    private static void flatten(String path, JsonNode node, Instant now, String statusId, List<ExtractedValue> into) {
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> child : node.properties()) {
                flatten(path + "." + child.getKey(), child.getValue(), now, statusId, into);
            }
        } else if (node.isArray()) {
            for (JsonNode element : node) {
                flatten(path, element, now, statusId, into);
            }
        } else if (node.isValueNode() && !node.isNull()) {
            into.add(new ExtractedValue(path, node.asText(), now, statusId));
        }
    }

    synchronized List<ReportedDeclaration> declarationStatus(String enrollmentId) {
        return List.copyOf(declarationStatus.getOrDefault(enrollmentId, Map.of()).values());
    }

    synchronized boolean knowsStatusOf(String enrollmentId) {
        return declarationStatus.containsKey(enrollmentId) || values.containsKey(enrollmentId);
    }

    /** Values whose path matches a SQL LIKE-style prefix ({@code %} = anything), as KMFDDM's query does. */
    synchronized List<ExtractedValue> values(String enrollmentId, String likePattern) {
        Pattern pattern = like(likePattern);
        return values.getOrDefault(enrollmentId, List.of()).stream().filter(value -> pattern.matcher(value.path()).matches()).toList();
    }

    synchronized int reportCount(String enrollmentId) {
        return reports.getOrDefault(enrollmentId, List.of()).size();
    }

    /** Report by reverse index: 0 = newest. */
    synchronized Optional<StoredReport> report(String enrollmentId, int index) {
        List<StoredReport> list = reports.getOrDefault(enrollmentId, List.of());
        if (index < 0 || index >= list.size()) {
            return Optional.empty();
        }
        return Optional.of(list.get(list.size() - 1 - index));
    }

    // ---- counters ----

    synchronized List<String> declarationWrites() {
        return List.copyOf(declarationWrites);
    }

    synchronized List<String> declarationChanges() {
        return List.copyOf(declarationChanges);
    }

    synchronized List<String> setChanges() {
        return List.copyOf(setChanges);
    }

    synchronized List<String> assignmentChanges() {
        return List.copyOf(assignmentChanges);
    }

    synchronized List<Delivery> deliveries() {
        return List.copyOf(deliveries);
    }

    private static Pattern like(String likePattern) {
        if (likePattern == null || likePattern.isEmpty()) {
            return Pattern.compile(".*", Pattern.DOTALL);
        }
        StringBuilder regex = new StringBuilder();
        for (String part : likePattern.split("%", -1)) {
            if (!regex.isEmpty()) {
                regex.append(".*");
            }
            regex.append(Pattern.quote(part).replace("_", "\\E.\\Q"));
        }
        return Pattern.compile(regex.toString(), Pattern.DOTALL);
    }

    /** A content hash, as KMFDDM derives ServerToken from the declaration (so an unchanged PUT keeps its token). */
    static String token(String type, JsonNode payload) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(type.getBytes(StandardCharsets.UTF_8));
            digest.update((byte) 0);
            digest.update(JSON.writeValueAsBytes(JSON.treeToValue(payload, Object.class)));
            return HexFormat.of().formatHex(digest.digest()).substring(0, 16);
        } catch (NoSuchAlgorithmException | java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
