package io.macfleet.database;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.facts.ObservationStore;
import io.macfleet.facts.Reachability;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Machine reachability (migration V8_1) on a real PostgreSQL server, and on H2: the same statements on both. */
class PostgresObservationStoreTest {

    @Test
    void reachabilityOnPostgresqlAndH2() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            try (AgroalDataSource dataSource = server.database("observation")) {
                contract(new ObservationStore(dataSource));
            }
        }
        try (AgroalDataSource dataSource = PostgresServer.h2("observation")) {
            contract(new ObservationStore(dataSource));
        }
    }

    private static void contract(ObservationStore store) {
        Instant t0 = Instant.parse("2026-11-24T00:00:00Z");
        store.unreachable("studio-01", t0, t0.plusSeconds(5), "studio-01: `sw_vers`: connection refused", "service:observe");
        Reachability never = store.of("studio-01").orElseThrow();
        assertThat(never.lastSeenAt()).isEmpty();
        assertThat(never.unreachableSince()).contains(t0.plusSeconds(5));

        store.answered("studio-01", t0.plusSeconds(60), null, "cli:alice");
        store.unreachable("studio-01", t0.plusSeconds(120), t0.plusSeconds(125), "timeout", "service:observe");
        store.unreachable("studio-01", t0.plusSeconds(180), t0.plusSeconds(185), "timeout again", "service:observe");
        Reachability away = store.of("studio-01").orElseThrow();
        assertThat(away.lastSeenAt()).contains(t0.plusSeconds(60));
        assertThat(away.unreachableSince()).contains(t0.plusSeconds(125));
        assertThat(away.lastError()).contains("timeout again");

        store.answered("studio-01", t0.plusSeconds(240), null, "cli:alice");
        // An attempt that started before that answer and failed later is out of date: nothing changes.
        store.unreachable("studio-01", t0.plusSeconds(230), t0.plusSeconds(250), "late timeout", "service:observe");
        Reachability back = store.of("studio-01").orElseThrow();
        assertThat(back.reachable()).isTrue();
        assertThat(back.lastError()).isEmpty();
        assertThat(back.lastSeenAt()).contains(t0.plusSeconds(240));
        assertThat(store.all()).containsOnlyKeys("studio-01");
    }
}
