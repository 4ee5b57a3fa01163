package io.macfleet.inventory;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
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
 * apply (make the database match in one transaction, with its audit entries in the same transaction).
 */
@ApplicationScoped
public class DesiredStateStore {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<LinkedHashMap<String, Object>> DOCUMENT = new TypeReference<>() {
    };

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
        return Jdbc.inTransaction(dataSource, connection -> {
            // Serializes concurrent applies: the second one plans against what the first committed.
            Jdbc.query(connection, "select id from inventory_lock where id = 1 for update", row -> row.getInt(1));
            Plan plan = plan(connection, inventory);
            Instant now = clock.instant();
            OffsetDateTime updatedAt = OffsetDateTime.ofInstant(now, ZoneOffset.UTC);
            Map<String, Cluster> clusters = inventory.clusters().stream().collect(Collectors.toMap(Cluster::name, cluster -> cluster));
            Map<String, Machine> machines = inventory.machines().stream().collect(Collectors.toMap(Machine::name, machine -> machine));
            for (Plan.Change change : plan.changes()) {
                write(connection, change, clusters, machines, updatedAt);
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

    private void write(Connection connection, Plan.Change change, Map<String, Cluster> clusters, Map<String, Machine> machines,
                       OffsetDateTime updatedAt) throws SQLException {
        String table = change.kind() == Plan.Kind.CLUSTER ? "inventory_cluster" : "inventory_machine";
        if (change.action() != Plan.Action.ADD) {
            Jdbc.update(connection, "delete from " + table + " where name = ?", change.name());
        }
        if (change.action() == Plan.Action.REMOVE) {
            return;
        }
        if (change.kind() == Plan.Kind.CLUSTER) {
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

    // ---- reading, for the REST API

    /** The stored clusters, each with the names of its machines. */
    public List<Map<String, Object>> clusters() {
        return Jdbc.withConnection(dataSource, connection -> {
            Map<String, List<String>> members = new LinkedHashMap<>();
            for (String[] row : Jdbc.query(connection, "select cluster_name, name from inventory_machine where cluster_name is not null order by name",
                    rows -> new String[] {rows.getString(1), rows.getString(2)})) {
                members.computeIfAbsent(row[0], key -> new ArrayList<>()).add(row[1]);
            }
            List<Map<String, Object>> clusters = new ArrayList<>();
            stored(connection, "inventory_cluster").forEach((name, document) -> {
                document.put("machines", members.getOrDefault(name, List.of()));
                clusters.add(document);
            });
            return clusters;
        });
    }

    public Optional<Map<String, Object>> cluster(String name) {
        return clusters().stream().filter(cluster -> name.equals(cluster.get("name"))).findFirst();
    }

    /** The stored machines in name order, optionally only those of one cluster. */
    public List<Map<String, Object>> machines(String clusterName) {
        return Jdbc.withConnection(dataSource, connection -> {
            String sql = "select name, document from inventory_machine" + (clusterName == null ? "" : " where cluster_name = ?") + " order by name";
            Object[] parameters = clusterName == null ? new Object[0] : new Object[] {clusterName};
            return Jdbc.query(connection, sql, rows -> document(rows.getString(2)), parameters);
        });
    }

    public Optional<Map<String, Object>> machine(String name) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select document from inventory_machine where name = ?", rows -> document(rows.getString(1)), name).stream().findFirst());
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
}
