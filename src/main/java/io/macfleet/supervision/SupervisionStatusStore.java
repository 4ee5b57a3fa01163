package io.macfleet.supervision;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.macfleet.database.Jdbc;
import io.macfleet.deployment.LaunchdService;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.jboss.logging.Logger;

/**
 * The supervisor's latest status of each cluster in the database (migration V10_1), one row per cluster: written by
 * the instance that supervises the cluster after each look, read by every instance. The same statements on H2 and
 * PostgreSQL (an update, then an insert when there was no row, as {@code observe.ObservationStore} does).
 */
@Singleton
final class SupervisionStatusStore {

    private static final Logger LOG = Logger.getLogger(SupervisionStatusStore.class);
    /** Past this many remembered unreadable rows the memory of what was logged starts over (a leak guard). */
    private static final int REPORTED_LIMIT = 1_000;

    /** launchd's last exit as stored: by type name, like {@link Diagnosis}, never by class name. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
    @JsonSubTypes({
            @JsonSubTypes.Type(value = LaunchdService.LastExit.NeverExited.class, name = "never-exited"),
            @JsonSubTypes.Type(value = LaunchdService.LastExit.Code.class, name = "code"),
            @JsonSubTypes.Type(value = LaunchdService.LastExit.Signal.class, name = "signal"),
            @JsonSubTypes.Type(value = LaunchdService.LastExit.Unreadable.class, name = "unreadable")})
    private interface LastExitNames {
    }

    // Unknown fields are skipped (a newer version may add some); an unknown diagnosis type name is not, it makes the
    // row unreadable: guessing what a newer supervisor meant would show a wrong state.
    static final ObjectMapper JSON = new ObjectMapper().registerModule(new Jdk8Module()).registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            // NotDeployed and Serving have no fields: written as their type name alone.
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .addMixIn(LaunchdService.LastExit.class, LastExitNames.class);

    /**
     * What a row's document holds.
     *
     * @param processSince per rank, since when the supervisor saw the rank's current process
     */
    record Document(ClusterStatus status, Map<Integer, Instant> processSince) {
    }

    private final DataSource dataSource;
    private final Set<String> reported = ConcurrentHashMap.newKeySet();

    @Inject
    SupervisionStatusStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * Stores the cluster's latest status. A row holding a later look (written by the instance that took the cluster
     * over while this one was still looking) is left as it is.
     */
    void save(ClusterStatus status, Map<Integer, Instant> processSince, String observedBy) {
        String document = write(new Document(status, processSince));
        OffsetDateTime at = OffsetDateTime.ofInstant(status.observation().at(), ZoneOffset.UTC);
        Jdbc.withConnection(dataSource, connection -> {
            int updated = Jdbc.update(connection, "update supervision_status set observed_at = ?, observed_by = ?, document = ?"
                    + " where cluster = ? and observed_at <= ?", at, observedBy, document, status.name(), at);
            if (updated == 0) {
                try {
                    Jdbc.update(connection, "insert into supervision_status (cluster, observed_at, observed_by, document) values (?, ?, ?, ?)",
                            status.name(), at, observedBy, document);
                } catch (SQLException exists) {
                    // The row exists and holds a later look than this one: that one stands.
                }
            }
            return null;
        });
    }

    /**
     * Every stored status, by cluster name. A row that cannot be read is an {@link SharedStatus.Unreadable} for its
     * cluster (logged once), never an exception: the other clusters are shown all the same.
     *
     * @param staleBefore a look before this instant is stale
     */
    List<SharedStatus> all(Instant staleBefore) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select cluster, observed_at, observed_by, document from supervision_status order by cluster",
                row -> read(row, staleBefore)));
    }

    /**
     * Deletes the rows of every cluster but these (those that left the inventory or have no finished deployment), except
     * rows of looks made at or after {@code asOf}: a cluster deployed since the caller read the inventory keeps the
     * status its supervisor has just written.
     *
     * @param asOf when the caller read which clusters are deployed
     */
    int keepOnly(Set<String> clusters, Instant asOf) {
        List<Object> parameters = new ArrayList<>(clusters);
        parameters.add(OffsetDateTime.ofInstant(asOf, ZoneOffset.UTC));
        String others = clusters.isEmpty() ? "" : "cluster not in (" + String.join(", ", Collections.nCopies(clusters.size(), "?")) + ") and ";
        return Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "delete from supervision_status where " + others + "observed_at < ?", parameters.toArray()));
    }

    private SharedStatus read(ResultSet row, Instant staleBefore) throws SQLException {
        String cluster = row.getString(1);
        Instant at = row.getObject(2, OffsetDateTime.class).toInstant();
        String observedBy = row.getString(3);
        boolean stale = at.isBefore(staleBefore);
        try {
            Document document = JSON.readValue(row.getString(4), Document.class);
            check(cluster, document);
            return new SharedStatus.Observed(document.status(), document.processSince() == null ? Map.of() : document.processSince(),
                    observedBy, stale);
        } catch (JsonProcessingException | RuntimeException e) {
            String problem = e instanceof JsonProcessingException json ? json.getOriginalMessage() : e.getMessage();
            if (reported.size() > REPORTED_LIMIT) {
                reported.clear();
            }
            if (reported.add(cluster + "@" + at)) {
                LOG.warnf("the supervision status of cluster %s stored by %s at %s cannot be read by this version (%s);"
                        + " shown as an unreadable status until its supervisor writes it again", cluster, observedBy, at, problem);
            }
            return new SharedStatus.Unreadable(cluster, at, observedBy, stale, problem);
        }
    }

    /** What the console and API rely on is there: a document that lacks it is unreadable, not half shown. */
    private static void check(String cluster, Document document) {
        ClusterStatus status = document.status();
        if (status == null || status.observation() == null || status.observation().cluster() == null || status.diagnosis() == null
                || status.observation().at() == null || status.alert() == null || status.servingSince() == null) {
            throw new IllegalArgumentException("the document lacks the status, its observation, its diagnosis or its time");
        }
        if (!cluster.equals(status.name())) {
            throw new IllegalArgumentException("the document is the status of cluster " + status.name() + ", not " + cluster);
        }
        if (status.observation().ranks().stream().anyMatch(rank -> rank == null || rank.health() == null || rank.healthDetail() == null || rank.launchd() == null
                || rank.rdma() == null)) {
            throw new IllegalArgumentException("a rank of the document lacks its health, launchd state or RDMA state");
        }
    }

    private static String write(Document document) {
        try {
            return JSON.writeValueAsString(document);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the supervision status of cluster " + document.status().name() + " cannot be written as JSON", e);
        }
    }
}
