package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import io.macfleet.secrets.SecretReference;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import java.util.Optional;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The application's DataSource. Application scoped, so a client proxy: the pool is opened and the schema
 * migrated on first use only, and commands that never touch the database (validate, --help) never open it.
 */
@ApplicationScoped
public class DatabaseProducer {

    @ConfigProperty(name = "macfleet.database.url")
    String url;

    @ConfigProperty(name = "macfleet.database.user", defaultValue = "")
    String user;

    @ConfigProperty(name = "macfleet.database.password")
    Optional<String> password;

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
        SecretReference reference = password.filter(text -> !text.isBlank()).map(text -> SecretReference.parse(text)
                .orElseThrow(() -> new IllegalArgumentException(
                        "macfleet.database.password: expected a secret reference env:NAME or file:PATH, never the password itself")))
                .orElse(null);
        return Database.open(new DatabaseSettings(url, user, reference));
    }

    void close(@Disposes DataSource dataSource) {
        if (dataSource instanceof AgroalDataSource pool) {
            pool.close();
        }
    }
}
