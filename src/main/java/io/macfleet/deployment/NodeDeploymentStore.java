package io.macfleet.deployment;

import io.macfleet.database.Jdbc;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/** Node deployments and their phases in the database (migration V9_1). */
public final class NodeDeploymentStore {

    /** One deployment as stored. {@code modelSource} is a path on the control host or a URL. */
    public record Deployment(long id, String cluster, String nodeJar, String nodeSha256, String nodeVersion, String modelSource,
                             String modelSha256, long modelSize, String phase, String message, String startedBy, Instant createdAt,
                             Instant updatedAt, Optional<Instant> finishedAt) {
        public boolean finished() {
            return finishedAt.isPresent();
        }

        /** The model's file name: the last part of its path on the control host or of its URL. */
        public String modelFileName() {
            return modelSource.substring(modelSource.lastIndexOf('/') + 1);
        }
    }

    private final DataSource dataSource;

    public NodeDeploymentStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public long create(String cluster, NodeRelease release, String startedBy, Instant now) {
        return Jdbc.inTransaction(dataSource, connection -> {
            try (var statement = connection.prepareStatement("insert into node_deployment (cluster, node_jar, node_sha256, node_version,"
                    + " model_source, model_sha256, model_size, phase, message, started_by, created_at, updated_at)"
                    + " values (?, ?, ?, ?, ?, ?, ?, 'staging', null, ?, ?, ?)", new String[] {"id"})) {
                statement.setString(1, cluster);
                statement.setString(2, release.nodeJar().toAbsolutePath().toString());
                statement.setString(3, release.nodeSha256());
                statement.setString(4, release.nodeVersion());
                statement.setString(5, release.modelSource());
                statement.setString(6, release.modelSha256());
                statement.setLong(7, release.modelSize());
                statement.setString(8, startedBy);
                statement.setObject(9, time(now));
                statement.setObject(10, time(now));
                statement.executeUpdate();
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    keys.next();
                    return keys.getLong(1);
                }
            }
        });
    }

    /** Records a phase; {@code serving} and {@code failed} finish the deployment. */
    public void phase(long id, String phase, String message, Instant now) {
        boolean finishes = phase.equals("serving") || phase.equals("failed");
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update node_deployment set phase = ?, message = ?, updated_at = ?" + (finishes ? ", finished_at = ?" : "") + " where id = ?",
                finishes ? new Object[] {phase, cap(message), time(now), time(now), id} : new Object[] {phase, cap(message), time(now), id}));
    }

    /** The cluster's latest deployment that never finished (macfleet stopped in the middle), if any. */
    public Optional<Deployment> unfinished(String cluster) {
        return latest(cluster).filter(deployment -> !deployment.finished());
    }

    public Optional<Deployment> latest(String cluster) {
        List<Deployment> rows = Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select * from node_deployment where cluster = ? order by id desc limit 1", NodeDeploymentStore::row, cluster));
        return rows.stream().findFirst();
    }

    /** Every cluster's latest deployment, by cluster name, in one query (the fleet view reads them all at once). */
    public java.util.Map<String, Deployment> latestPerCluster() {
        List<Deployment> rows = Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select * from node_deployment d where d.id = (select max(id) from node_deployment l where l.cluster = d.cluster)",
                NodeDeploymentStore::row));
        java.util.Map<String, Deployment> latest = new java.util.TreeMap<>();
        rows.forEach(deployment -> latest.put(deployment.cluster(), deployment));
        return latest;
    }

    private static Deployment row(ResultSet rows) throws SQLException {
        Timestamp finished = rows.getTimestamp("finished_at");
        return new Deployment(rows.getLong("id"), rows.getString("cluster"), rows.getString("node_jar"), rows.getString("node_sha256"),
                rows.getString("node_version"), rows.getString("model_source"), rows.getString("model_sha256"), rows.getLong("model_size"),
                rows.getString("phase"), rows.getString("message"), rows.getString("started_by"), rows.getTimestamp("created_at").toInstant(),
                rows.getTimestamp("updated_at").toInstant(), Optional.ofNullable(finished).map(Timestamp::toInstant));
    }

    private static String cap(String message) {
        return message == null || message.length() <= 2000 ? message : message.substring(0, 1997) + "...";
    }

    private static OffsetDateTime time(Instant instant) {
        return instant.atOffset(ZoneOffset.UTC);
    }
}
