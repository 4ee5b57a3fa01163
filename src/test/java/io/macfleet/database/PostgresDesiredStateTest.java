package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The desired-state contract on a real PostgreSQL server, a new database per test. */
class PostgresDesiredStateTest extends DesiredStateContract {

    @RegisterExtension
    static final PostgresServer.PerClass postgres = new PostgresServer.PerClass();
    private static int databases;
    private AgroalDataSource dataSource;

    @BeforeEach
    void open() {
        String name = "contract_" + databases++;
        dataSource = postgres.server().database(name);
    }

    @AfterEach
    void close() {
        dataSource.close();
    }

    @Override
    DataSource dataSource() {
        return dataSource;
    }
}
