package io.macfleet.facts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.database.Jdbc;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/** Facts in the database: appended per gathering, the latest and the history readable per machine. */
@Singleton
public final class FactsStore {

    static final ObjectMapper JSON = new ObjectMapper().findAndRegisterModules()
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private final DataSource dataSource;

    @Inject
    public FactsStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Stores the observations in one transaction: all of them or none. */
    public void save(Collection<FactsObservation> observations) {
        if (observations.isEmpty()) {
            return;
        }
        Jdbc.inTransaction(dataSource, connection -> {
            for (FactsObservation observation : observations) {
                MachineFacts facts = observation.facts();
                Jdbc.update(connection, "insert into machine_facts (machine, observed_at, serial_number, model_identifier, memory_bytes, "
                                + "macos_version, macos_build, rdma_enabled, document) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        facts.machine(), OffsetDateTime.ofInstant(facts.observedAt(), ZoneOffset.UTC), facts.serialNumber(),
                        facts.modelIdentifier(), facts.memoryBytes(), facts.macosVersion(), facts.macosBuild(), facts.rdmaEnabled(),
                        write(observation));
            }
            return null;
        });
    }

    /** The machine's most recent observation. */
    public Optional<FactsObservation> latest(String machine) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select document from machine_facts where machine = ? order by observed_at desc, id desc fetch first 1 rows only",
                row -> read(row.getString(1)), machine)).stream().findFirst();
    }

    /** The most recent observation of each of the machines that has one. */
    public Map<String, FactsObservation> latest(Collection<String> machines) {
        Map<String, FactsObservation> latest = new LinkedHashMap<>();
        for (String machine : machines) {
            latest(machine).ifPresent(observation -> latest.put(machine, observation));
        }
        return latest;
    }

    /**
     * Which row holds each machine's most recent observation, for every machine that has one, in one query and
     * without reading the documents. Rows are never updated, so a row id names one observation for good: callers
     * may cache what they derive from it under that id.
     */
    public Map<String, LatestRow> latestRows() {
        return Jdbc.withConnection(dataSource, connection -> {
            Map<String, LatestRow> rows = new LinkedHashMap<>();
            for (LatestRow row : Jdbc.query(connection, "select id, machine, observed_at from (select id, machine, observed_at, "
                            + "row_number() over (partition by machine order by observed_at desc, id desc) as position from machine_facts) ranked "
                            + "where position = 1 order by machine",
                    result -> new LatestRow(result.getLong(1), result.getString(2), result.getObject(3, OffsetDateTime.class).toInstant()))) {
                rows.put(row.machine(), row);
            }
            return rows;
        });
    }

    /** The observations stored in these rows (see {@link #latestRows()}), by row id, in one query. */
    public Map<Long, FactsObservation> observations(Collection<Long> ids) {
        Map<Long, FactsObservation> observations = new LinkedHashMap<>();
        if (ids.isEmpty()) {
            return observations;
        }
        String placeholders = String.join(", ", java.util.Collections.nCopies(ids.size(), "?"));
        Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select id, document from machine_facts where id in (" + placeholders + ")",
                row -> observations.put(row.getLong(1), read(row.getString(2))), ids.toArray()));
        return observations;
    }

    /** The most recent observation of every machine that has one, in two queries whatever the number of machines. */
    public Map<String, FactsObservation> latestOfAll() {
        Map<String, LatestRow> rows = latestRows();
        Map<Long, FactsObservation> byId = observations(rows.values().stream().map(LatestRow::id).toList());
        Map<String, FactsObservation> latest = new LinkedHashMap<>();
        rows.forEach((machine, row) -> latest.put(machine, byId.get(row.id())));
        return latest;
    }

    /** Where a machine's latest observation is stored and when it was made. */
    public record LatestRow(long id, String machine, java.time.Instant observedAt) {
    }

    /** Every stored observation of the machine's facts, newest first. */
    public List<MachineFacts> history(String machine) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select document from machine_facts where machine = ? order by observed_at desc, id desc",
                row -> read(row.getString(1)).facts(), machine));
    }

    private static String write(FactsObservation observation) {
        try {
            return JSON.writeValueAsString(observation);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write facts of " + observation.machine() + " as JSON", e);
        }
    }

    private static FactsObservation read(String document) {
        try {
            return JSON.readValue(document, FactsObservation.class);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored facts are not readable JSON: " + e.getOriginalMessage(), e);
        }
    }
}
