package io.macfleet.facts;

import io.macfleet.database.Jdbc;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/** Reachability of every machine (migration V8_1): one row per machine, written after each gathering. */
@Singleton
public final class ObservationStore {

    private static final int ERROR_LIMIT = 4000;

    private final DataSource dataSource;

    @Inject
    public ObservationStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** The machine answered at {@code at} (its facts may still have failed to parse: then {@code error} says why). */
    public void answered(String machine, Instant at, String error, String observedBy) {
        write(machine, at, at, true, error, observedBy);
    }

    /**
     * An attempt that started at {@code startedAt} could not reach the machine by {@code at}; it stays unreachable since
     * the first such attempt in a row. An attempt that started before the machine last answered is out of date (a hung
     * gathering ending after a later Refresh now succeeded) and changes nothing.
     */
    public void unreachable(String machine, Instant startedAt, Instant at, String error, String observedBy) {
        write(machine, startedAt, at, false, error, observedBy);
    }

    private void write(String machine, Instant startedAt, Instant at, boolean answered, String error, String observedBy) {
        OffsetDateTime started = OffsetDateTime.ofInstant(startedAt, ZoneOffset.UTC);
        OffsetDateTime time = OffsetDateTime.ofInstant(at, ZoneOffset.UTC);
        String message = error == null ? null : error.length() > ERROR_LIMIT ? error.substring(0, ERROR_LIMIT - 1) + "…" : error;
        Jdbc.withConnection(dataSource, connection -> {
            int updated = answered
                    ? Jdbc.update(connection, "update machine_observation set last_attempt_at = ?, last_seen_at = ?, unreachable_since = null,"
                    + " last_error = ?, observed_by = ? where machine = ? and (last_seen_at is null or last_seen_at <= ?)",
                    time, time, message, observedBy, machine, time)
                    : Jdbc.update(connection, "update machine_observation set last_attempt_at = ?, unreachable_since = coalesce(unreachable_since, ?),"
                    + " last_error = ?, observed_by = ? where machine = ? and (last_seen_at is null or last_seen_at <= ?)",
                    time, time, message, observedBy, machine, started);
            if (updated == 0) {
                try {
                    Jdbc.update(connection, "insert into machine_observation (machine, last_attempt_at, last_seen_at, unreachable_since, last_error,"
                            + " observed_by) values (?, ?, ?, ?, ?, ?)", machine, time, answered ? time : null, answered ? null : time, message, observedBy);
                } catch (java.sql.SQLException exists) {
                    // The row exists and holds a newer answer than this attempt: nothing to change.
                }
            }
            return null;
        });
    }

    public Optional<Reachability> of(String machine) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select machine, last_attempt_at, last_seen_at, unreachable_since, last_error, observed_by from machine_observation where machine = ?",
                ObservationStore::row, machine)).stream().findFirst();
    }

    /** Every machine's reachability, in one query. */
    public Map<String, Reachability> all() {
        Map<String, Reachability> all = new LinkedHashMap<>();
        Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select machine, last_attempt_at, last_seen_at, unreachable_since, last_error, observed_by from machine_observation order by machine",
                ObservationStore::row)).forEach(reachability -> all.put(reachability.machine(), reachability));
        return all;
    }

    private static Reachability row(java.sql.ResultSet row) throws java.sql.SQLException {
        return new Reachability(row.getString(1), row.getObject(2, OffsetDateTime.class).toInstant(), instant(row, 3), instant(row, 4),
                Optional.ofNullable(row.getString(5)), row.getString(6));
    }

    private static Optional<Instant> instant(java.sql.ResultSet row, int column) throws java.sql.SQLException {
        return Optional.ofNullable(row.getObject(column, OffsetDateTime.class)).map(OffsetDateTime::toInstant);
    }
}
