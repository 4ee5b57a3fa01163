package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import io.macfleet.accounts.AccountsDatabaseContract;
import org.junit.jupiter.api.Test;

/** The accounts schema (migration V5_1) and its queries on a real PostgreSQL server, not only on H2. */
class PostgresAccountsTest {

    @Test
    void usersSessionsTokensAndThrottling() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            try (AgroalDataSource dataSource = server.database("accounts")) {
                AccountsDatabaseContract.usersSessionsTokensAndThrottling(dataSource);
            }
        }
    }
}
