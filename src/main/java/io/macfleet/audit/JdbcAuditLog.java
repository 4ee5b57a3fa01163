package io.macfleet.audit;

import io.macfleet.database.Jdbc;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * The audit log in the database table audit_event. Only inserts and reads: there is no code path that
 * changes or deletes an entry.
 */
@ApplicationScoped
public class JdbcAuditLog implements AuditLog {

    private final DataSource dataSource;

    @Inject
    public JdbcAuditLog(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public void record(AuditEvent event) {
        Jdbc.withConnection(dataSource, connection -> {
            record(connection, event);
            return null;
        });
    }

    /** Records within the caller's transaction, so that a change and its audit entry commit together. */
    public static void record(Connection connection, AuditEvent event) throws SQLException {
        Jdbc.update(connection, "insert into audit_event (occurred_at, actor, machine, action, detail, outcome) values (?, ?, ?, ?, ?, ?)",
                OffsetDateTime.ofInstant(event.at(), ZoneOffset.UTC), event.actor(), event.machine(), event.action(),
                event.detail(), event.outcome().name());
    }

    /** The most recent entries matching the query, newest first, after skipping {@code query.offset()} of them. */
    public List<AuditEntry> find(AuditQuery query) {
        List<Object> parameters = new ArrayList<>();
        String sql = "select id, occurred_at, actor, machine, action, detail, outcome from audit_event where " + conditions(query, parameters)
                + " order by id desc offset " + query.offset() + " rows fetch next " + query.limit() + " rows only";
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, sql, row -> new AuditEntry(
                row.getLong("id"),
                new AuditEvent(row.getObject("occurred_at", OffsetDateTime.class).toInstant(), row.getString("actor"),
                        row.getString("machine"), row.getString("action"), row.getString("detail"),
                        AuditEvent.Outcome.valueOf(row.getString("outcome")))), parameters.toArray()));
    }

    /** How many entries match the query's filters (offset and limit aside). */
    public long count(AuditQuery query) {
        List<Object> parameters = new ArrayList<>();
        String sql = "select count(*) from audit_event where " + conditions(query, parameters);
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, sql, row -> row.getLong(1), parameters.toArray()).getFirst());
    }

    /** An exact action as it is; "inventory.*" as the like pattern "inventory.%" (%, _ and \\ in the prefix matched literally). */
    private static String actionPattern(String action) {
        if (!action.endsWith("*")) {
            return action;
        }
        String prefix = action.substring(0, action.length() - 1);
        return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
    }

    private static String conditions(AuditQuery query, List<Object> parameters) {
        StringBuilder sql = new StringBuilder("1 = 1");
        if (query.machine() != null) {
            sql.append(" and machine = ?");
            parameters.add(query.machine());
        }
        if (query.action() != null) {
            sql.append(query.action().endsWith("*") ? " and action like ? escape '\\'" : " and action = ?");
            parameters.add(actionPattern(query.action()));
        }
        for (String excluded : query.excludedActions()) {
            sql.append(excluded.endsWith("*") ? " and action not like ? escape '\\'" : " and action <> ?");
            parameters.add(actionPattern(excluded));
        }
        if (query.actor() != null) {
            sql.append(" and actor = ?");
            parameters.add(query.actor());
        }
        if (query.since() != null) {
            sql.append(" and occurred_at >= ?");
            parameters.add(OffsetDateTime.ofInstant(query.since(), ZoneOffset.UTC));
        }
        if (query.until() != null) {
            sql.append(" and occurred_at < ?");
            parameters.add(OffsetDateTime.ofInstant(query.until(), ZoneOffset.UTC));
        }
        if (query.text() != null) {
            // The same lower() and like ... escape on H2 and PostgreSQL; the text is matched literally, % and _ included.
            String pattern = "%" + query.text().toLowerCase(Locale.ROOT).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
            sql.append(" and (lower(actor) like ? escape '\\' or lower(coalesce(machine, '')) like ? escape '\\'"
                    + " or lower(action) like ? escape '\\' or lower(detail) like ? escape '\\')");
            for (int column = 0; column < 4; column++) {
                parameters.add(pattern);
            }
        }
        return sql.toString();
    }
}
