package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** The desired-state contract on a real PostgreSQL server, a new database per test. */
class PostgresDesiredStateTest extends DesiredStateContract {

    private static PostgresServer server;
    private static int databases;
    private AgroalDataSource dataSource;

    @BeforeAll
    static void startServer() throws Exception {
        server = PostgresServer.start();
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void open() {
        String name = "contract_" + databases++;
        dataSource = server.database(name);
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
