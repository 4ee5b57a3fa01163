package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import io.macfleet.facts.FactsFromSamplesTestAccess;
import org.junit.jupiter.api.Test;

/** The facts storage (migration V3_1) on a real PostgreSQL server. */
class PostgresFactsStoreTest {

    @Test
    void latestAndHistory() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            try (AgroalDataSource dataSource = server.database("facts")) {
                FactsFromSamplesTestAccess.latestAndHistory(dataSource);
            }
        }
    }
}
