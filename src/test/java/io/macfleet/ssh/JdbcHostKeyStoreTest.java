package io.macfleet.ssh;

import org.flywaydb.core.Flyway;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JdbcHostKeyStoreTest {

    private JdbcHostKeyStore store;

    @BeforeEach
    void migrate() {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load().migrate();
        store = new JdbcHostKeyStore(dataSource);
    }

    @Test
    void recordsOnceFindsAndForgets() {
        Instant seen = Instant.parse("2026-11-21T10:15:30Z");
        StoredHostKey first = new StoredHostKey("studio-01", "192.168.50.11:22", "ssh-ed25519",
                "SHA256:Yk3hPq0V7m2Cw1u4tLkXh2m9Ff3q7yQ8yqg1c2VtR0A", seen);
        assertThat(store.find("studio-01")).isEmpty();
        assertThat(store.recordIfAbsent(first)).isTrue();
        assertThat(store.find("studio-01")).contains(first);

        StoredHostKey other = new StoredHostKey("studio-01", "192.168.50.11:22", "ssh-ed25519",
                "SHA256:AAAAPq0V7m2Cw1u4tLkXh2m9Ff3q7yQ8yqg1c2VtR0A", seen.plus(1, ChronoUnit.DAYS));
        assertThat(store.recordIfAbsent(other)).isFalse();
        assertThat(store.find("studio-01")).contains(first);

        assertThat(store.forget("studio-01")).isTrue();
        assertThat(store.forget("studio-01")).isFalse();
        assertThat(store.find("studio-01")).isEmpty();
    }

    @Test
    void pinsThroughTheTransportAcrossRuns() throws IOException {
        try (TestSshServer server = TestSshServer.start(TestSshServer.answer("ok", 0))) {
            SshSettings settings = SshSettings.defaults("cli:test")
                    .withLimits(ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofSeconds(5)));
            SshTarget target = server.target("studio-02");
            new SshTransport(settings.withAcceptNewHostKeys(true), store, new InMemoryAuditLog())
                    .onFleet(java.util.List.of(target), machine -> machine.execute(Command.reading("true")).requireSuccess());
            assertThat(store.find("studio-02")).get().extracting(StoredHostKey::fingerprint)
                    .isEqualTo(server.hostKeyFingerprint());

            server.changeHostKey();
            var results = new SshTransport(settings, store, new InMemoryAuditLog())
                    .onFleet(java.util.List.of(target), machine -> machine.execute(Command.reading("true")));
            assertThat(results.getFirst().error()).isInstanceOf(SshException.HostKeyChanged.class)
                    .hasMessageContaining(server.hostKeyFingerprint());
        }
    }

    @Test
    void aBrokenDatabaseIsReportedWithTheMachine() {
        JdbcDataSource missingTable = new JdbcDataSource();
        missingTable.setURL("jdbc:h2:mem:" + UUID.randomUUID());
        assertThatThrownBy(() -> new JdbcHostKeyStore(missingTable).find("studio-03"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot read the recorded host key of studio-03");
    }
}
