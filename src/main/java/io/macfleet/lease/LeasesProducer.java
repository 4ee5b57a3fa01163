package io.macfleet.lease;

import io.macfleet.database.Database;
import io.macfleet.database.DatabaseProducer;
import io.macfleet.database.DatabaseSettings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;

/**
 * The instance's {@link Leases}: PostgreSQL advisory locks on a PostgreSQL database, leases kept in this process on
 * the embedded H2 database. Application scoped, so nothing is opened before the first lease is asked for.
 */
@ApplicationScoped
public class LeasesProducer {

    @Inject
    DatabaseProducer database;

    @Produces
    @ApplicationScoped
    Leases leases() {
        DatabaseSettings settings = database.settings();
        if (settings.postgresql()) {
            return new AdvisoryLockLeases(() -> Database.unpooledPostgresqlSession(settings));
        }
        return new InProcessLeases(settings.url());
    }

    void close(@Disposes Leases leases) {
        if (leases instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                // Closing ends the session; its locks end with it whatever the driver reports.
            }
        }
    }
}
