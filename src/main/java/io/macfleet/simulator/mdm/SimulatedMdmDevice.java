package io.macfleet.simulator.mdm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.macfleet.simulator.MacosRelease;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The MDM client of one simulated Mac: it syncs declarations when the server notifies it, judges them as macOS does
 * ({@link DeclarationRules}; a configuration no activation references stays inactive with
 * {@code Info.NotReferencedByActivation}), reports the status items it is subscribed to incrementally (only what
 * changed), and carries out an enforcement: downloading → prepared → (deadline) installing → restart → the new
 * version and build. An enforcement whose target Apple does not offer for this model stays active but idle.
 */
public final class SimulatedMdmDevice {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Failure texts the simulated Mac reports in softwareupdate.failure-reason (composed: no real capture found). */
    public static final String NO_BOOTSTRAP_TOKEN = "The update could not be authorized: no bootstrap token is escrowed with the MDM server.";
    public static final String NOT_ENOUGH_DISK = "Not enough free disk space to download the update.";
    public static final String DOWNLOAD_FAILED = "The update could not be downloaded.";

    /** Where the update stands; {@link #wire} is the install-state value. */
    public enum Phase {
        IDLE("none"), DOWNLOADING("downloading"), PREPARED("prepared"), INSTALLING("installing"), RESTARTING("installing"), FAILED("failed");

        private final String wire;

        Phase(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }
    }

    private record Applied(String type, String token, JsonNode payload, boolean active, String valid, ArrayNode reasons) {
    }

    private record Target(String identifier, String token, String osVersion, Optional<String> build, LocalDateTime deadline) {
    }

    /** An MDM command the device received and answered (Acknowledged). */
    public record ReceivedCommand(String commandUuid, String requestType) {
    }

    private final String enrollmentId;
    private final DeviceHost host;
    private final UpdateTimings timings;
    private final UpdateCatalog catalog;
    private final DeviceChannel channel;
    private final DeviceFaults faults = new DeviceFaults();
    private final AtomicBoolean syncRequested = new AtomicBoolean();
    private final List<ReceivedCommand> pendingCommands = new ArrayList<>();
    private final List<ReceivedCommand> answeredCommands = new ArrayList<>();

    private final Map<String, Applied> applied = new LinkedHashMap<>();
    private final Set<String> subscribed = new LinkedHashSet<>();
    private final Map<String, JsonNode> lastReported = new HashMap<>();
    private JsonNode lastReportedDeclarations;
    private Optional<Target> target = Optional.empty();
    private Phase phase = Phase.IDLE;
    private Instant phaseSince = Instant.now();
    private MacosRelease pending;
    private String settledToken;
    private boolean missedDeadline;
    private int failureCount;
    private String failureReason;
    private Instant failureTime;

    SimulatedMdmDevice(String enrollmentId, DeviceHost host, UpdateTimings timings, UpdateCatalog catalog, DeviceChannel channel) {
        this.enrollmentId = enrollmentId;
        this.host = host;
        this.timings = timings;
        this.catalog = catalog;
        this.channel = channel;
        syncRequested.set(true);
    }

    public String enrollmentId() {
        return enrollmentId;
    }

    public DeviceHost host() {
        return host;
    }

    public DeviceFaults faults() {
        return faults;
    }

    public synchronized Phase phase() {
        return phase;
    }

    public synchronized List<ReceivedCommand> answeredCommands() {
        return List.copyOf(answeredCommands);
    }

    /** The server's push: the device syncs at its next check-in (when it is on). */
    void requestSync() {
        syncRequested.set(true);
    }

    synchronized void receive(ReceivedCommand command) {
        pendingCommands.add(command);
    }

    /** One check-in period. Nothing happens while the Mac is off, except noting a deadline that passes. */
    synchronized void tick() {
        Instant now = Instant.now();
        if (!host.poweredOn()) {
            if ((phase == Phase.PREPARED || phase == Phase.DOWNLOADING) && target.isPresent() && !now.isBefore(deadline(target.get()))) {
                missedDeadline = true;
            }
            return;
        }
        pendingCommands.addAll(channel.commands());
        for (ReceivedCommand command : List.copyOf(pendingCommands)) {
            pendingCommands.remove(command);
            answeredCommands.add(command);
            if (command.requestType().equals("DeclarativeManagement")) {
                // KMFDDM's way of telling a device that its declarations changed.
                syncRequested.set(true);
            }
            if (command.requestType().equals("RestartDevice")) {
                host.restart();
                return;
            }
        }
        if (syncRequested.getAndSet(false)) {
            sync();
        }
        advance(now);
        report();
    }

    // ---- declarations ----

    private void sync() {
        Map<String, String> knownTokens = new HashMap<>();
        applied.forEach((identifier, declaration) -> knownTokens.put(identifier, declaration.token()));
        // The device fetches only declarations whose token changed (declaration-items), so each revision once.
        List<DdmStore.StoredDeclaration> delivered = channel.declarations(knownTokens);
        Map<String, DdmStore.StoredDeclaration> byIdentifier = new LinkedHashMap<>();
        for (DdmStore.StoredDeclaration declaration : delivered) {
            byIdentifier.put(declaration.identifier(), declaration);
        }
        Set<String> referenced = new LinkedHashSet<>();
        Map<String, Applied> next = new LinkedHashMap<>();
        for (DdmStore.StoredDeclaration declaration : delivered) {
            if (!DeclarationRules.isActivation(declaration.type())) {
                continue;
            }
            Optional<DeclarationRules.Problem> problem = DeclarationRules.check(declaration.type(), declaration.payload());
            if (problem.isPresent()) {
                next.put(declaration.identifier(), judged(declaration, false, "invalid", problem.get()));
                continue;
            }
            List<String> wanted = new ArrayList<>();
            declaration.payload().path("StandardConfigurations").forEach(id -> wanted.add(id.asText()));
            List<String> missing = wanted.stream().filter(id -> !byIdentifier.containsKey(id)).toList();
            if (!missing.isEmpty()) {
                next.put(declaration.identifier(), judged(declaration, false, "valid", new DeclarationRules.Problem("Error.MissingConfigurations",
                        "Missing configurations", Map.of("Identifier", declaration.identifier(), "ServerToken", declaration.serverToken(),
                        "ConfigurationIdentifiers", missing))));
                continue;
            }
            referenced.addAll(wanted);
            next.put(declaration.identifier(), judged(declaration, true, "valid", null));
        }
        for (DdmStore.StoredDeclaration declaration : delivered) {
            if (DeclarationRules.isActivation(declaration.type())) {
                continue;
            }
            if (!DeclarationRules.TYPES.containsKey(declaration.type())) {
                next.put(declaration.identifier(), judged(declaration, false, "invalid", DeclarationRules.check(declaration.type(), declaration.payload()).orElseThrow()));
            } else if (!referenced.contains(declaration.identifier())) {
                // The text of a real report (KMFDDM test/e2e/testdata/status.D0.error.json).
                next.put(declaration.identifier(), judged(declaration, false, "unknown", new DeclarationRules.Problem("Info.NotReferencedByActivation",
                        "Configuration “" + declaration.identifier() + ":" + declaration.serverToken() + "” is not referenced by an activation.",
                        Map.of("Identifier", declaration.identifier(), "ServerToken", declaration.serverToken()))));
            } else {
                Optional<DeclarationRules.Problem> problem = DeclarationRules.check(declaration.type(), declaration.payload());
                next.put(declaration.identifier(), problem.map(p -> judged(declaration, false, "invalid", p)).orElseGet(() -> judged(declaration, true, "valid", null)));
            }
        }
        applied.clear();
        applied.putAll(next);

        subscribed.clear();
        Optional<Target> newTarget = Optional.empty();
        for (Map.Entry<String, Applied> entry : applied.entrySet()) {
            Applied declaration = entry.getValue();
            if (!declaration.active()) {
                continue;
            }
            if (declaration.type().equals(DeclarationRules.SUBSCRIPTIONS)) {
                declaration.payload().path("StatusItems").forEach(item -> subscribed.add(item.path("Name").asText()));
            } else if (declaration.type().equals(DeclarationRules.ENFORCEMENT)) {
                JsonNode payload = declaration.payload();
                Target candidate = new Target(entry.getKey(), declaration.token(), payload.path("TargetOSVersion").asText(),
                        payload.hasNonNull("TargetBuildVersion") ? Optional.of(payload.path("TargetBuildVersion").asText()) : Optional.empty(),
                        LocalDateTime.parse(payload.path("TargetLocalDateTime").asText()));
                if (newTarget.isEmpty() || compareVersions(candidate.osVersion(), newTarget.get().osVersion()) > 0) {
                    newTarget = Optional.of(candidate);
                }
            }
        }
        boolean changed = !newTarget.map(Target::token).equals(target.map(Target::token));
        target = newTarget;
        if (changed && phase != Phase.INSTALLING && phase != Phase.RESTARTING) {
            enter(Phase.IDLE);
            pending = null;
            missedDeadline = false;
            failureCount = 0;
            failureReason = null;
            failureTime = null;
            settledToken = null;
        }
    }

    private static Applied judged(DdmStore.StoredDeclaration declaration, boolean active, String valid, DeclarationRules.Problem problem) {
        ArrayNode reasons = JSON.createArrayNode();
        if (problem != null) {
            ObjectNode reason = reasons.addObject();
            reason.set("details", JSON.valueToTree(problem.details()));
            reason.put("description", problem.description());
            reason.put("code", problem.code());
        }
        return new Applied(declaration.type(), declaration.serverToken(), declaration.payload(), active, valid, reasons);
    }

    // ---- the update ----

    private void advance(Instant now) {
        if (target.isEmpty()) {
            if (phase != Phase.INSTALLING && phase != Phase.RESTARTING) {
                enter(Phase.IDLE);
                pending = null;
            }
            return;
        }
        Target goal = target.get();
        if (goal.token().equals(settledToken) && phase != Phase.RESTARTING) {
            return;
        }
        switch (phase) {
            case IDLE -> {
                Optional<MacosRelease> offered = catalog.offered(host.modelIdentifier(), goal.osVersion(), goal.build());
                if (offered.isEmpty()) {
                    return; // Apple: without a matching update the declaration stays active but idle.
                }
                MacosRelease current = host.release();
                boolean there = current.version().equals(offered.get().version()) && current.build().equals(offered.get().build());
                if (there || current.compareVersion(offered.get()) > 0) {
                    settledToken = goal.token();
                    return;
                }
                pending = offered.get();
                enter(Phase.DOWNLOADING);
                if (faults.notEnoughDisk) {
                    fail(NOT_ENOUGH_DISK, goal);
                }
            }
            case DOWNLOADING -> {
                if (elapsed(now, timings.download())) {
                    if (faults.downloadFails) {
                        fail(DOWNLOAD_FAILED, goal);
                    } else {
                        enter(Phase.PREPARED);
                    }
                }
            }
            case PREPARED -> {
                Instant enforceAt = missedDeadline ? host.bootTime().plus(timings.enforceAfterRestart()) : deadline(goal);
                if (!now.isBefore(enforceAt)) {
                    if (!host.bootstrapTokenEscrowed()) {
                        fail(NO_BOOTSTRAP_TOKEN, goal);
                    } else {
                        enter(Phase.INSTALLING);
                    }
                }
            }
            case INSTALLING -> {
                if (elapsed(now, timings.install())) {
                    MacosRelease into = faults.wrongBuildAfterRestart ? otherBuild(pending) : pending;
                    enter(Phase.RESTARTING);
                    host.installAndRestart(into);
                }
            }
            case RESTARTING -> {
                if (host.bootTime().isAfter(phaseSince)) {
                    settledToken = goal.token();
                    pending = null;
                    missedDeadline = false;
                    enter(Phase.IDLE);
                }
            }
            case FAILED -> {
                // Stays failed until the server sends a new revision of the enforcement.
            }
        }
    }

    /** The same version on a different build, as a Mac that came back on a supplemental build. */
    static MacosRelease otherBuild(MacosRelease release) {
        return new MacosRelease(release.version(), release.build() + "a", release.darwinVersion(), release.kernelBuildDate(), release.xnu());
    }

    private void fail(String reason, Target goal) {
        enter(Phase.FAILED);
        failureCount++;
        failureReason = reason;
        failureTime = Instant.now();
        settledToken = goal.token();
    }

    private void enter(Phase next) {
        if (phase != next) {
            phase = next;
            phaseSince = Instant.now();
        }
    }

    private boolean elapsed(Instant now, Duration duration) {
        return !now.isBefore(phaseSince.plus(duration));
    }

    private static Instant deadline(Target target) {
        return target.deadline().atZone(ZoneId.systemDefault()).toInstant();
    }

    private static int compareVersions(String left, String right) {
        String[] a = left.split("\\.");
        String[] b = right.split("\\.");
        for (int i = 0; i < Math.max(a.length, b.length); i++) {
            int x = i < a.length ? Integer.parseInt(a[i]) : 0;
            int y = i < b.length ? Integer.parseInt(b[i]) : 0;
            if (x != y) {
                return Integer.compare(x, y);
            }
        }
        return 0;
    }

    // ---- status channel ----

    private Map<String, JsonNode> currentItems() {
        Map<String, JsonNode> items = new LinkedHashMap<>();
        MacosRelease release = host.release();
        // Devices send the OS version and build in their first report whether subscribed or not (KMFDDM's
        // status.1st.json), and afterwards when they change.
        items.put("device.operating-system.version", JSON.getNodeFactory().textNode(release.version()));
        items.put("device.operating-system.build-version", JSON.getNodeFactory().textNode(release.build()));
        if (subscribed.contains("softwareupdate.install-state")) {
            items.put("softwareupdate.install-state", JSON.getNodeFactory().textNode(phase.wire()));
        }
        if (subscribed.contains("softwareupdate.pending-version")) {
            ObjectNode pendingVersion = JSON.createObjectNode();
            boolean somethingPending = pending != null && phase != Phase.IDLE;
            pendingVersion.put("os-version", somethingPending ? pending.version() : "");
            pendingVersion.put("build-version", somethingPending ? pending.build() : "");
            items.put("softwareupdate.pending-version", pendingVersion);
        }
        if (subscribed.contains("softwareupdate.failure-reason")) {
            ObjectNode failure = JSON.createObjectNode();
            failure.put("count", failureCount);
            if (failureCount > 0) {
                failure.put("reason", failureReason);
                failure.put("timestamp", failureTime.toString());
            }
            items.put("softwareupdate.failure-reason", failure);
        }
        return items;
    }

    private void report() {
        ObjectNode statusItems = JSON.createObjectNode();
        boolean any = false;
        for (Map.Entry<String, JsonNode> item : currentItems().entrySet()) {
            if (!item.getValue().equals(lastReported.get(item.getKey()))) {
                put(statusItems, item.getKey(), item.getValue());
                lastReported.put(item.getKey(), item.getValue());
                any = true;
            }
        }
        JsonNode declarations = declarationsItem();
        if (!declarations.equals(lastReportedDeclarations)) {
            statusItems.withObjectProperty("management").set("declarations", declarations);
            lastReportedDeclarations = declarations;
            any = true;
        }
        if (any) {
            ObjectNode report = JSON.createObjectNode();
            report.set("StatusItems", statusItems);
            report.putArray("Errors");
            channel.report(report);
        }
    }

    private JsonNode declarationsItem() {
        ObjectNode declarations = JSON.createObjectNode();
        ArrayNode activations = declarations.putArray("activations");
        ArrayNode configurations = declarations.putArray("configurations");
        declarations.putArray("assets");
        declarations.putArray("management");
        for (Map.Entry<String, Applied> entry : applied.entrySet()) {
            Applied declaration = entry.getValue();
            ObjectNode status = (DeclarationRules.isActivation(declaration.type()) ? activations : configurations).addObject();
            if (!declaration.reasons().isEmpty()) {
                status.set("reasons", declaration.reasons());
            }
            status.put("active", declaration.active());
            status.put("identifier", entry.getKey());
            status.put("valid", declaration.valid());
            status.put("server-token", declaration.token());
        }
        return declarations;
    }

    /** "softwareupdate.install-state" → {"softwareupdate": {"install-state": value}}. */
    private static void put(ObjectNode root, String dottedName, JsonNode value) {
        String[] parts = dottedName.split("\\.");
        ObjectNode node = root;
        for (int i = 0; i < parts.length - 1; i++) {
            node = node.withObjectProperty(parts[i]);
        }
        node.set(parts[parts.length - 1], value);
    }
}
