package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.Jdbc;
import io.macfleet.database.PostgresServer;
import io.macfleet.deployment.LaunchdService;
import java.net.URI;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The shared supervision status (migration V10_1) on a real PostgreSQL server and on H2, the same statements on both:
 * every diagnosis and launchd exit survives the round trip through JSON, a later look replaces an earlier one and never
 * the other way round, rows of removed clusters go, and a row this version cannot read is reported for its cluster
 * alone.
 */
class SupervisionStatusStoreTest {

    private static final Instant T0 = Instant.parse("2026-11-24T09:00:00Z");
    private static final String FIRST = "4242@control-1/0a1b2c3d";
    private static final String SECOND = "5151@control-2/4e5f6a7b";

    @Test
    void sharedStatusesOnPostgresqlAndH2() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            try (AgroalDataSource dataSource = server.database("supervision")) {
                contract(dataSource);
            }
        }
        try (AgroalDataSource dataSource = PostgresServer.h2("supervision")) {
            contract(dataSource);
        }
    }

    private static void contract(AgroalDataSource dataSource) throws Exception {
        SupervisionStatusStore store = new SupervisionStatusStore(dataSource);
        assertThat(store.all(T0)).isEmpty();

        // Every diagnosis, each with ranks that carry every kind of launchd exit and both present and absent values.
        List<Diagnosis> diagnoses = List.of(new Diagnosis.NotDeployed(), new Diagnosis.Serving(),
                new Diagnosis.RanksDown(List.of("rank 1 (studio-02): /health did not answer"), true),
                new Diagnosis.Skew(1, "studio-02", "node version", "0.2.0", "0.1.0", "macfleet node deploy llm-a"),
                new Diagnosis.RdmaFailure(List.of("studio-02"), List.of("studio-02: ibv_devinfo did not answer within 5 s")));
        for (Diagnosis diagnosis : diagnoses) {
            ClusterStatus status = status("llm-a", T0, diagnosis, List.of(
                    rank(0, new LaunchdService(true, "running", OptionalLong.of(4711), OptionalInt.of(2), new LaunchdService.LastExit.NeverExited())),
                    rank(1, new LaunchdService(true, "not running", OptionalLong.empty(), OptionalInt.of(5), new LaunchdService.LastExit.Code(78, "EX_CONFIG")))),
                    Optional.of("gave up after 3 restart(s)"), Optional.empty());
            store.save(status, Map.of(0, T0.minusSeconds(600)), FIRST);
            assertThat(store.all(T0.minusSeconds(60))).containsExactly(new SharedStatus.Observed(status, Map.of(0, T0.minusSeconds(600)), FIRST, false));
            store.keepOnly(Set.of(), T0.plusSeconds(1));
        }
        ClusterStatus signalled = status("llm-b", T0, new Diagnosis.Serving(), List.of(
                        rank(0, new LaunchdService(true, "running", OptionalLong.of(12), OptionalInt.empty(), new LaunchdService.LastExit.Signal(9, "Killed"))),
                        rank(1, new LaunchdService(true, "running", OptionalLong.of(13), OptionalInt.of(1), new LaunchdService.LastExit.Unreadable("last exit code = ?"))),
                        new RankObservation(2, "studio-03", RankObservation.Health.UNREACHABLE, "connection refused", Optional.empty(), Optional.empty(),
                                Optional.empty(), RankObservation.Rdma.UNKNOWN, "", Optional.empty(), OptionalDouble.empty(), OptionalDouble.empty())),
                Optional.empty(), Optional.of(T0.minusSeconds(3600)));
        store.save(signalled, Map.of(), SECOND);
        assertThat(store.all(T0)).containsExactly(new SharedStatus.Observed(signalled, Map.of(), SECOND, false));

        // A later look replaces the row (whoever made it); an earlier one, written late, does not.
        ClusterStatus down = status("llm-b", T0.plusSeconds(5), new Diagnosis.RanksDown(List.of("rank 2 is missing"), false),
                signalled.observation().ranks(), Optional.empty(), Optional.empty());
        // With the supervisor's restart under way, which every instance shows.
        ClusterStatus later = new ClusterStatus(down.observation(), down.diagnosis(), down.restarts(), down.alert(), down.servingSince(),
                Optional.of(new ClusterSupervisor.Acting("ordered restart 1", T0.plusSeconds(4))));
        store.save(later, Map.of(), FIRST);
        store.save(signalled, Map.of(), SECOND);
        assertThat(store.all(T0)).singleElement().isEqualTo(new SharedStatus.Observed(later, Map.of(), FIRST, false));
        // Stale: looked at before the instant given.
        assertThat(store.all(T0.plusSeconds(6))).singleElement().satisfies(status -> {
            assertThat(status.stale()).isTrue();
            assertThat(status.lastSeen()).isEqualTo("last seen by " + FIRST + " at 2026-11-24 09:00:05 UTC");
        });

        // Rows this version cannot read: damaged JSON, a diagnosis of a newer version, another cluster's document.
        ClusterStatus other = status("llm-c", T0, new Diagnosis.Serving(), later.observation().ranks(), Optional.empty(), Optional.empty());
        insert(dataSource, "llm-d", "{\"status\": {\"observation\": ");
        insert(dataSource, "llm-e", SupervisionStatusStore.JSON.writeValueAsString(new SupervisionStatusStore.Document(other, Map.of()))
                .replace("\"kind\":\"serving\"", "\"kind\":\"quantum-decoherence\""));
        insert(dataSource, "llm-f", SupervisionStatusStore.JSON.writeValueAsString(new SupervisionStatusStore.Document(other, Map.of())));
        insert(dataSource, "llm-g", "{\"status\": null}");
        store.save(other, Map.of(), SECOND);
        List<SharedStatus> all = store.all(T0);
        assertThat(all).extracting(SharedStatus::cluster).containsExactly("llm-b", "llm-c", "llm-d", "llm-e", "llm-f", "llm-g");
        assertThat(all.get(0)).isEqualTo(new SharedStatus.Observed(later, Map.of(), FIRST, false));
        assertThat(all.get(1)).isEqualTo(new SharedStatus.Observed(other, Map.of(), SECOND, false));
        assertThat(all.subList(2, 6)).allSatisfy(status -> {
            assertThat(status).isInstanceOf(SharedStatus.Unreadable.class);
            assertThat(status.observedBy()).isEqualTo("9999@newer/00000000");
            assertThat(((SharedStatus.Unreadable) status).explain()).startsWith("unreadable status (stored by 9999@newer/00000000 at 2026-11-24 09:00:00 UTC): ");
        });
        assertThat(((SharedStatus.Unreadable) all.get(3)).problem()).contains("quantum-decoherence");
        assertThat(((SharedStatus.Unreadable) all.get(4)).problem()).contains("llm-c", "llm-f");

        // Clusters that left the inventory (or have no finished deployment) lose their row; the others keep theirs.
        assertThat(store.keepOnly(Set.of("llm-b", "llm-e"), T0.plusSeconds(1))).isEqualTo(4);
        assertThat(store.all(T0)).extracting(SharedStatus::cluster).containsExactly("llm-b", "llm-e");
        // A look made after the caller read the inventory (llm-b's, at T0 + 5 s) may be of a cluster deployed since: it stays.
        assertThat(store.keepOnly(Set.of(), T0.plusSeconds(5))).isEqualTo(1);
        assertThat(store.all(T0)).extracting(SharedStatus::cluster).containsExactly("llm-b");
        assertThat(store.keepOnly(Set.of(), T0.plusSeconds(6))).isEqualTo(1);
        assertThat(store.all(T0)).isEmpty();
    }

    static ClusterStatus status(String cluster, Instant at, Diagnosis diagnosis, List<RankObservation> ranks, Optional<String> alert,
                                Optional<Instant> servingSince) {
        List<SupervisedCluster.Rank> layout = ranks.stream().map(rank -> new SupervisedCluster.Rank(rank.rank(), rank.machine(),
                URI.create("http://10.0.0.1" + rank.rank() + ":8080/"), "io.macfleet.inference-node", "/var/log/macfleet/node.err.log")).toList();
        SupervisedCluster supervised = new SupervisedCluster(cluster, URI.create("http://10.0.0.10:8080/v1"), new SupervisedCluster.Policy(true), layout);
        return new ClusterStatus(new ClusterObservation(supervised, at, ranks), diagnosis, 2, alert, servingSince, Optional.empty());
    }

    private static RankObservation rank(int rank, LaunchdService launchd) {
        return new RankObservation(rank, "studio-0" + (rank + 1), rank == 0 ? RankObservation.Health.DEGRADED : RankObservation.Health.UNREACHABLE,
                rank == 0 ? "rank 1 is missing" : "connection refused", Optional.of(launchd), Optional.of("0.1.0"),
                Optional.of("189280 bytes, header sha256 7a9a"), RankObservation.Rdma.FAILURE_IN_LOG, "RDMA: ibv_poll_cq failed",
                Optional.of("node version differs: rank 0 has 0.1.0, rank 1 has 0.2.0"), OptionalDouble.of(11.5), OptionalDouble.of(0.42));
    }

    private static void insert(AgroalDataSource dataSource, String cluster, String document) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "insert into supervision_status (cluster, observed_at, observed_by, document) values (?, ?, ?, ?)",
                cluster, OffsetDateTime.ofInstant(T0, ZoneOffset.UTC), "9999@newer/00000000", document));
    }
}
