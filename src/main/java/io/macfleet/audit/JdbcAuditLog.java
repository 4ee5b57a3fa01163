package io.macfleet.audit;

import io.macfleet.database.DatabaseException;
import io.macfleet.database.Jdbc;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
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

    /** The most recent entries matching the query, newest first. */
    public List<AuditEntry> find(AuditQuery query) {
        StringBuilder sql = new StringBuilder("select id, occurred_at, actor, machine, action, detail, outcome from audit_event where 1 = 1");
        List<Object> parameters = new ArrayList<>();
        if (query.machine() != null) {
            sql.append(" and machine = ?");
            parameters.add(query.machine());
        }
        if (query.action() != null) {
            sql.append(" and action = ?");
            parameters.add(query.action());
        }
        if (query.actor() != null) {
            sql.append(" and actor = ?");
            parameters.add(query.actor());
        }
        if (query.since() != null) {
            sql.append(" and occurred_at >= ?");
            parameters.add(OffsetDateTime.ofInstant(query.since(), ZoneOffset.UTC));
        }
        sql.append(" order by id desc fetch first ").append(query.limit()).append(" rows only");
        try {
            return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, sql.toString(), row -> new AuditEntry(
                    row.getLong("id"),
                    new AuditEvent(row.getObject("occurred_at", OffsetDateTime.class).toInstant(), row.getString("actor"),
                            row.getString("machine"), row.getString("action"), row.getString("detail"),
                            AuditEvent.Outcome.valueOf(row.getString("outcome")))), parameters.toArray()));
        } catch (DatabaseException e) {
            throw e;
        }
    }
}
