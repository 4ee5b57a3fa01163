package io.macfleet.inventory;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.database.Jdbc;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The desired state as applied from an inventory: plan (compare with the database, change nothing) and
 * apply (make the database match in one transaction, with its audit entries in the same transaction). What it
 * stored comes back as the typed records the loader made ({@link Inventory}, {@link Cluster}, {@link Machine},
 * {@link MdmServer}); the document maps the plan compares stay in this package.
 */
@ApplicationScoped
public class DesiredStateStore {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<LinkedHashMap<String, Object>> DOCUMENT = new TypeReference<>() {
    };
    /** The one row of inventory_mdm: an inventory names at most one MDM server. */
    private static final String MDM_NAME = "server";

    private final DataSource dataSource;
    private final Clock clock;

    @Inject
    public DesiredStateStore(DataSource dataSource) {
        this(dataSource, Clock.systemUTC());
    }

    public DesiredStateStore(DataSource dataSource, Clock clock) {
        this.dataSource = dataSource;
        this.clock = clock;
    }

    public Plan plan(Inventory inventory) {
        return Jdbc.withConnection(dataSource, connection -> plan(connection, inventory));
    }

    /**
     * Applies the inventory in one transaction and returns what changed.
     *
     * @param source where the inventory came from (a directory), for the audit entry
     */
    public Plan apply(Inventory inventory, String actor, String source) {
        return apply(inventory, actor, source, null);
    }

    /**
     * Applies the inventory only if it still makes exactly the expected changes (a saved or confirmed plan); otherwise
     * changes nothing and throws {@link StalePlanException}.
     *
     * @param expected the plan the operator saw, or null to apply whatever the inventory now changes
     */
    public Plan apply(Inventory inventory, String actor, String source, Plan expected) {
        return Jdbc.inTransaction(dataSource, connection -> {
            // Serializes concurrent applies: the second one plans against what the first committed.
            Jdbc.query(connection, "select id from inventory_lock where id = 1 for update", row -> row.getInt(1));
            Plan plan = plan(connection, inventory);
            if (expected != null && !expected.equals(plan)) {
                throw new StalePlanException("the stored desired state changed since the plan was made (planned: " + expected.appliedSummary()
                        + "; applying now: " + plan.appliedSummary() + "); nothing was applied: make a new plan");
            }
            Instant now = clock.instant();
            OffsetDateTime updatedAt = OffsetDateTime.ofInstant(now, ZoneOffset.UTC);
            Map<String, Cluster> clusters = inventory.clusters().stream().collect(Collectors.toMap(Cluster::name, cluster -> cluster));
            Map<String, Machine> machines = inventory.machines().stream().collect(Collectors.toMap(Machine::name, machine -> machine));
            for (Plan.Change change : plan.changes()) {
                write(connection, change, inventory, clusters, machines, updatedAt);
                JdbcAuditLog.record(connection, new AuditEvent(now, actor,
                        change.kind() == Plan.Kind.MACHINE ? change.name() : null,
                        "inventory." + change.kind().name().toLowerCase() + "." + change.action().name().toLowerCase(),
                        change.kind().name().toLowerCase() + " " + change.name() + describe(change), AuditEvent.Outcome.SUCCESS));
            }
            JdbcAuditLog.record(connection, new AuditEvent(now, actor, null, "inventory.apply",
                    "applied " + source + ": " + plan.appliedSummary(), AuditEvent.Outcome.SUCCESS));
            return plan;
        });
    }

    private static String describe(Plan.Change change) {
        if (change.action() != Plan.Action.CHANGE) {
            return "";
        }
        return ": " + change.fields().stream()
                .map(field -> field.field() + " " + field.before() + " -> " + field.after())
                .collect(Collectors.joining("; "));
    }

    private static String table(Plan.Kind kind) {
        return switch (kind) {
            case CLUSTER -> "inventory_cluster";
            case MACHINE -> "inventory_machine";
            case MDM -> "inventory_mdm";
        };
    }

    private void write(Connection connection, Plan.Change change, Inventory inventory, Map<String, Cluster> clusters, Map<String, Machine> machines,
                       OffsetDateTime updatedAt) throws SQLException {
        String table = table(change.kind());
        if (change.action() != Plan.Action.ADD) {
            Jdbc.update(connection, "delete from " + table + " where name = ?", change.name());
        }
        if (change.action() == Plan.Action.REMOVE) {
            return;
        }
        if (change.kind() == Plan.Kind.MDM) {
            Jdbc.update(connection, "insert into inventory_mdm (name, document, updated_at) values (?, ?, ?)",
                    MDM_NAME, json(InventoryDocuments.of(inventory.mdm())), updatedAt);
        } else if (change.kind() == Plan.Kind.CLUSTER) {
            Cluster cluster = clusters.get(change.name());
            Jdbc.update(connection, "insert into inventory_cluster (name, macos_version, topology_kind, document, updated_at) values (?, ?, ?, ?, ?)",
                    cluster.name(), cluster.macosVersion(), cluster.topology().kind().yamlName(), json(InventoryDocuments.of(cluster)), updatedAt);
        } else {
            Machine machine = machines.get(change.name());
            Jdbc.update(connection, "insert into inventory_machine (name, address, ssh_port, cluster_name, machine_role, document, updated_at) "
                            + "values (?, ?, ?, ?, ?, ?, ?)",
                    machine.name(), machine.address(), machine.ssh().port(), machine.cluster(), machine.role().yamlName(),
                    json(InventoryDocuments.of(machine)), updatedAt);
        }
    }

    private Plan plan(Connection connection, Inventory inventory) throws SQLException {
        List<Plan.Change> changes = new ArrayList<>();
        Map<String, Map<String, Object>> wanted = new LinkedHashMap<>();
        inventory.clusters().forEach(cluster -> wanted.put(cluster.name(), InventoryDocuments.of(cluster)));
        diff(Plan.Kind.CLUSTER, stored(connection, "inventory_cluster"), wanted, changes);
        wanted.clear();
        inventory.machines().forEach(machine -> wanted.put(machine.name(), InventoryDocuments.of(machine)));
        diff(Plan.Kind.MACHINE, stored(connection, "inventory_machine"), wanted, changes);
        wanted.clear();
        if (inventory.mdm() != null) {
            wanted.put(MDM_NAME, InventoryDocuments.of(inventory.mdm()));
        }
        diff(Plan.Kind.MDM, stored(connection, "inventory_mdm"), wanted, changes);
        return new Plan(changes);
    }

    private static void diff(Plan.Kind kind, Map<String, Map<String, Object>> stored, Map<String, Map<String, Object>> wanted,
                             List<Plan.Change> changes) {
        TreeSet<String> names = new TreeSet<>(stored.keySet());
        names.addAll(wanted.keySet());
        for (String name : names) {
            Map<String, String> before = stored.containsKey(name) ? InventoryDocuments.flatten(stored.get(name)) : Map.of();
            Map<String, String> after = wanted.containsKey(name) ? InventoryDocuments.flatten(wanted.get(name)) : Map.of();
            TreeSet<String> fields = new TreeSet<>(before.keySet());
            fields.addAll(after.keySet());
            List<Plan.FieldChange> fieldChanges = new ArrayList<>();
            for (String field : fields) {
                if (!java.util.Objects.equals(before.get(field), after.get(field))) {
                    fieldChanges.add(new Plan.FieldChange(field, before.get(field), after.get(field)));
                }
            }
            if (!stored.containsKey(name)) {
                changes.add(new Plan.Change(kind, Plan.Action.ADD, name, fieldChanges));
            } else if (!wanted.containsKey(name)) {
                changes.add(new Plan.Change(kind, Plan.Action.REMOVE, name, fieldChanges));
            } else if (!fieldChanges.isEmpty()) {
                changes.add(new Plan.Change(kind, Plan.Action.CHANGE, name, fieldChanges));
            }
        }
    }

    private static Map<String, Map<String, Object>> stored(Connection connection, String table) throws SQLException {
        Map<String, Map<String, Object>> documents = new LinkedHashMap<>();
        for (String[] row : Jdbc.query(connection, "select name, document from " + table + " order by name",
                rows -> new String[] {rows.getString(1), rows.getString(2)})) {
            documents.put(row[0], document(row[1]));
        }
        return documents;
    }

    // ---- reading: the applied desired state as records

    /** Everything applied, read at one moment: clusters and machines in name order, and the MDM server. */
    public Inventory inventory() {
        return Jdbc.withConnection(dataSource, connection -> new Inventory(
                Jdbc.query(connection, "select document from inventory_cluster order by name", rows -> InventoryDocuments.cluster(tree(rows.getString(1)))),
                Jdbc.query(connection, "select document from inventory_machine order by name", rows -> InventoryDocuments.machine(tree(rows.getString(1)))),
                mdm(connection).orElse(null)));
    }

    /** The stored clusters in name order. */
    public List<Cluster> clusters() {
        return Jdbc.withConnection(dataSource, connection ->
                Jdbc.query(connection, "select document from inventory_cluster order by name", rows -> InventoryDocuments.cluster(tree(rows.getString(1)))));
    }

    public Optional<Cluster> cluster(String name) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, "select document from inventory_cluster where name = ?",
                rows -> InventoryDocuments.cluster(tree(rows.getString(1))), name).stream().findFirst());
    }

    /** The stored machines in name order, optionally only those of one cluster. */
    public List<Machine> machines(String clusterName) {
        return Jdbc.withConnection(dataSource, connection -> {
            String sql = "select document from inventory_machine" + (clusterName == null ? "" : " where cluster_name = ?") + " order by name";
            Object[] parameters = clusterName == null ? new Object[0] : new Object[] {clusterName};
            return Jdbc.query(connection, sql, rows -> InventoryDocuments.machine(tree(rows.getString(1))), parameters);
        });
    }

    public Optional<Machine> machine(String name) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select document from inventory_machine where name = ?", rows -> InventoryDocuments.machine(tree(rows.getString(1))), name).stream().findFirst());
    }

    /** The MDM server of the applied inventory, if it names one. */
    public Optional<MdmServer> mdm() {
        return Jdbc.withConnection(dataSource, DesiredStateStore::mdm);
    }

    private static Optional<MdmServer> mdm(Connection connection) throws SQLException {
        return Jdbc.query(connection, "select document from inventory_mdm where name = ?", rows -> InventoryDocuments.mdm(tree(rows.getString(1))), MDM_NAME)
                .stream().findFirst();
    }

    private static JsonNode tree(String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored document is not JSON: " + e.getOriginalMessage(), e);
        }
    }

    private static String json(Map<String, Object> document) {
        try {
            return JSON.writeValueAsString(document);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Object> document(String json) {
        try {
            return JSON.readValue(json, DOCUMENT);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored document is not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** A saved or confirmed plan no longer matches what applying would change. */
    public static final class StalePlanException extends RuntimeException {
        public StalePlanException(String message) {
            super(message);
        }
    }
}
