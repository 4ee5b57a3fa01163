package io.macfleet.models.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.Jdbc;
import io.macfleet.database.PostgresServer;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Placements in the database (migration V12_27) on a real PostgreSQL server and on H2, the same statements on both:
 * progress while running, a placement whose heartbeat stopped reads as interrupted (as after a restart), the outcome
 * and where the model lies verified once done, a failure's message, and the rows going with the catalogue's model.
 */
class PlacementStoreTest {
    private static final String SHA = "ab".repeat(32);
    private static final Instant T0 = Instant.parse("2026-11-28T20:00:00Z");

    @Test
    void placementsAndPlacedCopiesOnPostgresqlAndH2() throws Exception {
        try (PostgresServer server = PostgresServer.start(); AgroalDataSource dataSource = server.database("placements")) {
            contract(dataSource);
        }
        try (AgroalDataSource dataSource = PostgresServer.h2("placements")) {
            contract(dataSource);
        }
    }

    private static void contract(AgroalDataSource dataSource) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "insert into model_catalogue (name, format, architecture,"
                + " quantization, total_bytes, runtimes, source, layers, key_value_heads, head_dimension, context_length, added_by, added_at)"
                + " values ('tiny', 'gguf', 'llama', 'Q4_K_M', 1000, 'bundled', '/x', 1, 1, 1, 1, 'test', ?)", T0.atOffset(ZoneOffset.UTC)));
        PlacementStore store = new PlacementStore(dataSource);

        store.start("p1", "llm-a", "tiny", "cli:alice", T0, 1000, List.of("studio-01", "studio-02"));
        store.progress("p1", Map.of("studio-01", 600L, "studio-02", 250L), T0.plusSeconds(1));

        PlacementStore.PlacementRecord running = store.latest("llm-a", T0.plusSeconds(2)).orElseThrow();
        assertThat(running.state()).isEqualTo(PlacementState.RUNNING);
        assertThat(running.startedBy()).isEqualTo("cli:alice");
        assertThat(running.machines()).extracting(PlacementStore.MachineRecord::machine, PlacementStore.MachineRecord::bytesWritten)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("studio-01", 600L), org.assertj.core.groups.Tuple.tuple("studio-02", 250L));
        assertThat(running.machines()).allSatisfy(machine -> assertThat(machine.outcome()).isEmpty());
        // No heartbeat for longer than STALE: its process is gone (a restart), so it is not shown as running.
        assertThat(store.find("p1", T0.plusSeconds(1).plus(PlacementStore.STALE).plusSeconds(1)).orElseThrow().state())
                .isEqualTo(PlacementState.INTERRUPTED);
        assertThat(store.placed("tiny")).isEmpty();

        PlacedFile file = new PlacedFile(Path.of("/home/models/tiny/tiny.gguf"), "abababababab-tiny.gguf", 1000, SHA);
        PlacementReport report = new PlacementReport("llm-a", List.of(List.of("studio-01", "studio-02")), List.of(
                new PlacementReport.MacOutcome("studio-01", PlacementReport.Kind.PLACED, 1000, 0, "placed and verified"),
                new PlacementReport.MacOutcome("studio-02", PlacementReport.Kind.FAILED, 500, 0, "disk full")), 1000, 1000, 5000, 1);
        store.finish("p1", "tiny", report, List.of(file), T0.plusSeconds(5));

        PlacementStore.PlacementRecord done = store.find("p1", T0.plus(java.time.Duration.ofDays(1))).orElseThrow();
        assertThat(done.state()).isEqualTo(PlacementState.DONE);
        assertThat(done.finishedAt()).contains(T0.plusSeconds(5));
        assertThat(done.bytesFromControlHost()).isEqualTo(1000);
        assertThat(done.machines()).extracting(machine -> machine.outcome().orElseThrow())
                .containsExactly(PlacementReport.Kind.PLACED, PlacementReport.Kind.FAILED);
        assertThat(done.machines().get(1).message()).contains("disk full");
        assertThat(store.placed("tiny")).containsExactly(new PlacementStore.PlacedCopy("tiny", "llm-a", "studio-01", file.path(),
                file.remotePath(), SHA, T0.plusSeconds(5), "placement p1"));

        store.start("p2", "llm-a", "tiny", "alice", T0.plusSeconds(10), 1000, List.of("studio-01"));
        store.fail("p2", "not enough disk space to place on llm-a", T0.plusSeconds(11));
        PlacementStore.PlacementRecord failed = store.latest("llm-a", T0.plusSeconds(12)).orElseThrow();
        assertThat(failed.id()).isEqualTo("p2");
        assertThat(failed.state()).isEqualTo(PlacementState.FAILED);
        assertThat(failed.error()).contains("not enough disk space to place on llm-a");
        assertThat(store.recent(10, T0.plusSeconds(12))).extracting(PlacementStore.PlacementRecord::id).containsExactly("p2", "p1");
        assertThat(store.latest("llm-b", T0)).isEmpty();
        assertThat(store.find("nope", T0)).isEqualTo(Optional.empty());

        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "delete from model_catalogue where name = 'tiny'"));
        assertThat(store.placed("tiny")).isEmpty();
    }
}
