package io.macfleet.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.database.Database;
import io.macfleet.database.PostgresServer;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two service instances' leases on one real PostgreSQL server (Debian's binaries, see PostgresServer). */
class AdvisoryLockLeasesTest {

    @RegisterExtension
    static final PostgresServer.PerClass postgres = new PostgresServer.PerClass();

    private static AdvisoryLockLeases instance() {
        return new AdvisoryLockLeases(() -> Database.unpooledPostgresqlSession(postgres.settings()));
    }

    @Test
    void oneInstanceHoldsAKeyAtATimeAndReleasingHandsItOver() {
        try (AdvisoryLockLeases first = instance(); AdvisoryLockLeases second = instance()) {
            Optional<Leases.Lease> lease = first.tryAcquire("observe:studio-01");
            assertThat(lease).isPresent();
            assertThat(lease.get().held()).isTrue();
            assertThat(second.tryAcquire("observe:studio-01")).isEmpty();
            assertThat(second.tryAcquire("observe:studio-02")).isPresent();
            // Confirming a lease this instance holds returns it again and does not stack locks.
            assertThat(first.tryAcquire("observe:studio-01")).containsSame(lease.get());

            lease.get().close();
            assertThat(lease.get().held()).isFalse();
            assertThat(second.tryAcquire("observe:studio-01")).isPresent();
            assertThat(first.tryAcquire("observe:studio-01")).isEmpty();
        }
    }

    @Test
    void closingAnInstanceReleasesAllItsLeases() {
        try (AdvisoryLockLeases second = instance()) {
            try (AdvisoryLockLeases first = instance()) {
                assertThat(first.tryAcquire("supervise:llm-a")).isPresent();
                assertThat(first.tryAcquire("supervise:llm-b")).isPresent();
                assertThat(second.tryAcquire("supervise:llm-a")).isEmpty();
            }
            assertThat(second.tryAcquire("supervise:llm-a")).isPresent();
            assertThat(second.tryAcquire("supervise:llm-b")).isPresent();
        }
    }

    @Test
    void aBrokenSessionLosesTheLeasesAndAnotherInstanceTakesThem() throws Exception {
        try (AdvisoryLockLeases first = instance(); AdvisoryLockLeases second = instance()) {
            Leases.Lease lease = first.tryAcquire("observe:studio-03").orElseThrow();
            assertThat(second.tryAcquire("observe:studio-03")).isEmpty();

            // The database ends the first instance's session, as when its network or server connection dies.
            try (Connection admin = Database.unpooledPostgresqlSession(postgres.settings()); Statement statement = admin.createStatement()) {
                statement.execute("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'macfleet leases'"
                        + " and pid <> pg_backend_pid() and pid in (select pid from pg_locks where locktype = 'advisory' and objid = "
                        + (AdvisoryLockLeases.lockNumber("observe:studio-03") & 0xffffffffL) + ")");
            }

            assertThat(lease.held()).isFalse();
            assertThat(second.tryAcquire("observe:studio-03")).isPresent();
            // The first instance reconnects on its next attempt and finds the work taken.
            assertThat(first.tryAcquire("observe:studio-03")).isEmpty();
            assertThat(first.tryAcquire("observe:studio-04")).isPresent();
        }
    }

    @Test
    void theLockNumberOfAKeyIsFixed() {
        assertThat(AdvisoryLockLeases.lockNumber("observe:studio-01")).isEqualTo(AdvisoryLockLeases.lockNumber("observe:studio-01"));
        assertThat(AdvisoryLockLeases.lockNumber("observe:studio-01")).isNotEqualTo(AdvisoryLockLeases.lockNumber("observe:studio-02"));
        // Pinned: a changed hash would let two releases hold one machine during a rolling upgrade.
        assertThat(AdvisoryLockLeases.lockNumber("observe:studio-01")).isEqualTo(PINNED_STUDIO_01);
    }

    private static final long PINNED_STUDIO_01 = -640138631262947441L;
}
