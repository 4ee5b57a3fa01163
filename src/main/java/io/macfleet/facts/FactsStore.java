package io.macfleet.facts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.database.Jdbc;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/** Facts in the database: appended per gathering, the latest and the history readable per machine. */
public final class FactsStore {

    static final ObjectMapper JSON = new ObjectMapper().findAndRegisterModules()
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private final DataSource dataSource;

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
