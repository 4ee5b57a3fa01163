package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import io.macfleet.accounts.AccountsDatabaseContract;
import org.junit.jupiter.api.Test;

/** The accounts schema (migration V5_1) and its queries on a real PostgreSQL server, not only on H2. */
class PostgresAccountsTest {

    @Test
    void usersSessionsTokensAndThrottling() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            try (AgroalDataSource admin = Database.pool(new DatabaseSettings(server.url(), "postgres", null))) {
                Jdbc.withConnection(admin, connection -> connection.createStatement().execute("create database accounts"));
            }
            try (AgroalDataSource dataSource = Database.open(new DatabaseSettings(server.url().replace("/postgres", "/accounts"), "postgres", null))) {
                AccountsDatabaseContract.usersSessionsTokensAndThrottling(dataSource);
            }
        }
    }
}
