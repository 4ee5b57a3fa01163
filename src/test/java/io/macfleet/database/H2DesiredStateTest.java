package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** The desired-state contract on H2, a new in-memory database per test. */
class H2DesiredStateTest extends DesiredStateContract {

    private static int databases;
    private AgroalDataSource dataSource;

    @BeforeEach
    void open() {
        dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:contract-" + databases++ + ";DB_CLOSE_DELAY=-1", "sa", null));
    }

    @AfterEach
    void close() {
        io.macfleet.database.Jdbc.withConnection(dataSource, connection -> connection.createStatement().execute("shutdown"));
        dataSource.close();
    }

    @Override
    DataSource dataSource() {
        return dataSource;
    }
}
