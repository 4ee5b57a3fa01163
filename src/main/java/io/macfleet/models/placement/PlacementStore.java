package io.macfleet.models.placement;

import io.macfleet.database.Jdbc;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Placements and where models lie verified, in the database (migration V12_27), so the API's and console's answers
 * survive a restart. A running placement's process refreshes its heartbeat about every second with each Mac's bytes;
 * a row still stored as running whose heartbeat is older than {@link #STALE} reads as {@link PlacementState#INTERRUPTED}
 * (decided when read, so a CLI placement and the service's own are judged alike and nothing has to run at start-up).
 */
public final class PlacementStore {
    /** Silence after which a running placement counts as interrupted (its process flushes about every second). */
    public static final Duration STALE = Duration.ofSeconds(30);

    /** One Mac of a placement: bytes written so far, its outcome once known (empty while it runs). */
    public record MachineRecord(String machine, Optional<PlacementReport.Kind> outcome, long bytesWritten, long bytesResent,
                                Optional<String> message) {
    }

    /** One placement as stored, its state judged at the time it was read. */
    public record PlacementRecord(String id, String cluster, String model, PlacementState state, String startedBy, Instant startedAt,
                                  Optional<Instant> finishedAt, long totalBytes, long bytesFromControlHost, List<MachineRecord> machines,
                                  Optional<String> error) {
        public PlacementRecord {
            machines = List.copyOf(machines);
        }
    }

    /** A catalogue file that a Mac holds verified: where, since when, and by which placement. */
    public record PlacedCopy(String model, String cluster, String machine, String path, String remotePath, String sha256,
                             Instant verifiedAt, String verifiedBy) {
    }

    private final DataSource dataSource;

    public PlacementStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** No database (placements built by hand in tests): records nothing, finds nothing. */
    public static PlacementStore none() {
        return new PlacementStore(null);
    }

    public void start(String id, String cluster, String model, String actor, Instant now, long totalBytes, List<String> machines) {
        if (dataSource == null) {
            return;
        }
        Jdbc.inTransaction(dataSource, connection -> {
            Jdbc.update(connection, "insert into model_placement (id, cluster, model_name, state, started_by, started_at, heartbeat_at,"
                            + " total_bytes, bytes_from_control_host) values (?, ?, ?, ?, ?, ?, ?, ?, 0)",
                    id, cluster, model, PlacementState.RUNNING.name(), cap(actor, 200), at(now), at(now), totalBytes);
            for (String machine : machines) {
                Jdbc.update(connection, "insert into model_placement_machine (placement_id, machine, bytes_written, bytes_resent)"
                        + " values (?, ?, 0, 0)", id, machine);
            }
            return null;
        });
    }

    /** Each Mac's bytes so far, and the heartbeat that keeps the placement from reading as interrupted. */
    public void progress(String id, Map<String, Long> bytesByMachine, Instant now) {
        if (dataSource == null) {
            return;
        }
        Jdbc.inTransaction(dataSource, connection -> {
            Jdbc.update(connection, "update model_placement set heartbeat_at = ? where id = ? and state = ?", at(now), id,
                    PlacementState.RUNNING.name());
            for (Map.Entry<String, Long> entry : bytesByMachine.entrySet()) {
                Jdbc.update(connection, "update model_placement_machine set bytes_written = ? where placement_id = ? and machine = ?"
                        + " and outcome is null", entry.getValue(), id, entry.getKey());
            }
            return null;
        });
    }

    /**
     * The report: each Mac's outcome, the bytes the control host sent; and for every Mac that holds the files verified
     * (placed or already there), one {@link PlacedCopy} per file.
     */
    public void finish(String id, String model, PlacementReport report, List<PlacedFile> files, Instant now) {
        if (dataSource == null) {
            return;
        }
        Jdbc.inTransaction(dataSource, connection -> {
            Jdbc.update(connection, "update model_placement set state = ?, finished_at = ?, heartbeat_at = ?, bytes_from_control_host = ?,"
                    + " total_bytes = ? where id = ?", PlacementState.DONE.name(), at(now), at(now), report.bytesFromControlHost(),
                    report.totalBytes(), id);
            for (PlacementReport.MacOutcome outcome : report.machines()) {
                if (Jdbc.update(connection, "update model_placement_machine set outcome = ?, bytes_written = ?, bytes_resent = ?, message = ?"
                                + " where placement_id = ? and machine = ?", outcome.kind().name(), outcome.bytesWritten(), outcome.bytesResent(),
                        cap(outcome.message(), 2000), id, outcome.machine()) == 0) {
                    Jdbc.update(connection, "insert into model_placement_machine (placement_id, machine, outcome, bytes_written, bytes_resent,"
                                    + " message) values (?, ?, ?, ?, ?, ?)", id, outcome.machine(), outcome.kind().name(), outcome.bytesWritten(),
                            outcome.bytesResent(), cap(outcome.message(), 2000));
                }
                if (outcome.kind() == PlacementReport.Kind.FAILED || model == null) {
                    continue;
                }
                for (PlacedFile file : files) {
                    Jdbc.update(connection, "delete from model_placed_file where model_name = ? and cluster = ? and machine = ? and path = ?",
                            model, report.cluster(), outcome.machine(), file.path());
                    Jdbc.update(connection, "insert into model_placed_file (model_name, cluster, machine, path, remote_path, sha256, verified_at,"
                                    + " verified_by) values (?, ?, ?, ?, ?, ?, ?, ?)", model, report.cluster(), outcome.machine(), file.path(),
                            file.remotePath(), file.sha256(), at(now), "placement " + id);
                }
            }
            return null;
        });
    }

    /** Refused or broken before a report. */
    public void fail(String id, String error, Instant now) {
        if (dataSource == null) {
            return;
        }
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update model_placement set state = ?, finished_at = ?, heartbeat_at = ?, error = ? where id = ?",
                PlacementState.FAILED.name(), at(now), at(now), cap(String.valueOf(error), 2000), id));
    }

    public Optional<PlacementRecord> find(String id, Instant now) {
        return read("where id = ?", now, id).stream().findFirst();
    }

    /** The cluster's most recent placement. */
    public Optional<PlacementRecord> latest(String cluster, Instant now) {
        return read("where cluster = ? order by started_at desc, id fetch first 1 rows only", now, cluster).stream().findFirst();
    }

    /** The most recent placements of every cluster, newest first. */
    public List<PlacementRecord> recent(int limit, Instant now) {
        return read("order by started_at desc, id fetch first " + Math.max(1, limit) + " rows only", now);
    }

    /** Where the model lies verified, by cluster, machine and file. */
    public List<PlacedCopy> placed(String model) {
        if (dataSource == null) {
            return List.of();
        }
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select model_name, cluster, machine, path, remote_path, sha256, verified_at, verified_by from model_placed_file"
                        + " where model_name = ? order by cluster, machine, path",
                row -> new PlacedCopy(row.getString(1), row.getString(2), row.getString(3), row.getString(4), row.getString(5),
                        row.getString(6), row.getTimestamp(7).toInstant(), row.getString(8)), model));
    }

    private List<PlacementRecord> read(String where, Instant now, Object... parameters) {
        if (dataSource == null) {
            return List.of();
        }
        return Jdbc.withConnection(dataSource, connection -> {
            List<PlacementRecord> heads = Jdbc.query(connection, "select * from model_placement " + where, row -> head(row, now), parameters);
            List<PlacementRecord> records = new ArrayList<>();
            for (PlacementRecord head : heads) {
                List<MachineRecord> machines = Jdbc.query(connection, "select machine, outcome, bytes_written, bytes_resent, message"
                                + " from model_placement_machine where placement_id = ? order by machine",
                        row -> new MachineRecord(row.getString(1), Optional.ofNullable(row.getString(2)).map(PlacementReport.Kind::valueOf),
                                row.getLong(3), row.getLong(4), Optional.ofNullable(row.getString(5))), head.id());
                records.add(new PlacementRecord(head.id(), head.cluster(), head.model(), head.state(), head.startedBy(), head.startedAt(),
                        head.finishedAt(), head.totalBytes(), head.bytesFromControlHost(), machines, head.error()));
            }
            return records;
        });
    }

    private static PlacementRecord head(ResultSet row, Instant now) throws SQLException {
        PlacementState state = PlacementState.valueOf(row.getString("state").toUpperCase(Locale.ROOT));
        Instant heartbeat = row.getTimestamp("heartbeat_at").toInstant();
        if (state == PlacementState.RUNNING && heartbeat.plus(STALE).isBefore(now)) {
            state = PlacementState.INTERRUPTED;
        }
        Timestamp finished = row.getTimestamp("finished_at");
        return new PlacementRecord(row.getString("id"), row.getString("cluster"), row.getString("model_name"), state,
                row.getString("started_by"), row.getTimestamp("started_at").toInstant(),
                Optional.ofNullable(finished).map(Timestamp::toInstant), row.getLong("total_bytes"), row.getLong("bytes_from_control_host"),
                List.of(), Optional.ofNullable(row.getString("error")));
    }

    private static Object at(Instant instant) {
        return instant.atOffset(ZoneOffset.UTC);
    }

    private static String cap(String text, int length) {
        return text == null || text.length() <= length ? text : text.substring(0, length);
    }
}
