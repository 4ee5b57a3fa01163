package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import io.macfleet.config.MacfleetConfig;
import io.macfleet.secrets.SecretReference;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import javax.sql.DataSource;

/**
 * The application's DataSource. Application scoped, so a client proxy: the pool is opened and the schema
 * migrated on first use only, and commands that never touch the database (validate, --help) never open it.
 */
@ApplicationScoped
public class DatabaseProducer {

    @Inject
    MacfleetConfig config;

    @Produces
    @ApplicationScoped
    DataSource dataSource() {
        try {
            return open();
        } catch (IllegalArgumentException | io.macfleet.secrets.SecretUnavailableException e) {
            // Bad configuration: reported like any other database failure, without a stack trace.
            throw new DatabaseException(e.getMessage(), e);
        }
    }

    private DataSource open() {
        return Database.open(settings());
    }

    /** The configured database; {@code io.macfleet.lease} opens its own session with it. */
    public DatabaseSettings settings() {
        SecretReference reference = config.database().password().filter(text -> !text.isBlank()).map(text -> SecretReference.parse(text)
                .orElseThrow(() -> new IllegalArgumentException(
                        "macfleet.database.password: expected a secret reference env:NAME or file:PATH, never the password itself")))
                .orElse(null);
        return new DatabaseSettings(config.database().url(), config.database().user().orElse(""), reference);
    }

    void close(@Disposes DataSource dataSource) {
        if (dataSource instanceof AgroalDataSource pool) {
            pool.close();
        }
    }
}
