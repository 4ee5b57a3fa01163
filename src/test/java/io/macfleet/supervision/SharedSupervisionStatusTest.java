package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.fleet.FleetStatus;
import io.macfleet.fleet.Status;
import io.macfleet.console.columns.InferenceColumn;
import io.macfleet.database.Database;
import io.macfleet.database.PostgresServer;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.Inventory;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.lease.AdvisoryLockLeases;
import io.macfleet.lease.LeaseOwners;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two "macfleet serve" instances on one real PostgreSQL server, each with its own connection pool, its own advisory-lock
 * leases, supervisor and shared statuses, composed as {@link SupervisionService#round()} composes them (without SSH):
 * the one that does not hold the cluster's lease answers with the other's look, named as the other's, in the API's
 * terms and in the fleet view's Inference column; that look turns stale when its supervisor stops looking; the
 * instance that takes the cluster over answers with its own; and the row goes when the cluster is no longer deployed.
 */
class SharedSupervisionStatusTest {

    private static final Duration INTERVAL = Duration.ofSeconds(5);

    @RegisterExtension
    static final PostgresServer.PerClass postgres = new PostgresServer.PerClass();

    @TempDir
    Path directory;

    /** The supervision of one instance: what {@link SupervisionService} holds, its SSH shell aside. */
    private static final class ServeInstance implements AutoCloseable {
        final AgroalDataSource pool = Database.open(postgres.settings());
        final AdvisoryLockLeases leases = new AdvisoryLockLeases(() -> Database.unpooledPostgresqlSession(postgres.settings()));
        final ClusterSupervisorTest.RecordingControl control = new ClusterSupervisorTest.RecordingControl();
        final SupervisionLoop loop;
        final SharedStatuses shared;
        final ClusterSupervisorTest.TestClock clock;

        ServeInstance(ClusterProbe probe, ClusterSupervisorTest.TestClock clock) {
            this.clock = clock;
            loop = new SupervisionLoop(leases, probe, new ClusterSupervisor(new ClusterSupervisor.Settings(Duration.ZERO, Duration.ofSeconds(5),
                    Duration.ofSeconds(20), 3), control, event -> { }, clock));
            shared = new SharedStatuses(new SupervisionStatusStore(pool), LeaseOwners.next(), INTERVAL, clock);
        }

        /** One round as the service runs it: look and act where this instance holds the lease, then share what it saw. */
        List<ClusterStatus> round(List<SupervisedCluster> deployed, Map<String, Map<Integer, Instant>> processSince) {
            Instant deployedAsOf = clock.instant();
            List<ClusterStatus> seen = loop.round(deployed);
            shared.afterRound(seen, processSince, Set.copyOf(deployed.stream().map(SupervisedCluster::name).toList()), deployedAsOf);
            return seen;
        }

        @Override
        public void close() {
            loop.close();
            leases.close();
            pool.close();
        }
    }

    @Test
    void theInstanceWithoutTheLeaseShowsTheHoldersLookNamedAsItsThenStaleThenItsOwnAfterTakingOver() throws Exception {
        ClusterSupervisorTest.TestClock clock = new ClusterSupervisorTest.TestClock();
        SupervisedCluster cluster = ClusterSupervisorTest.cluster(false);
        ClusterProbe down = ClusterSupervisorTest.rankOneDown(clock);
        Instant started = clock.instant().minusSeconds(600);
        Map<String, Map<Integer, Instant>> processSince = Map.of("llm-a", Map.of(0, started));
        Inventory inventory = exampleInventory();

        try (ServeInstance second = new ServeInstance(down, clock)) {
            ServeInstance holder;
            try (ServeInstance first = new ServeInstance(down, clock)) {
                List<ClusterStatus> byFirst = first.round(List.of(cluster), processSince);
                List<ClusterStatus> bySecond = second.round(List.of(cluster), processSince);
                assertThat(byFirst).as("the first instance to ask takes the lease").hasSize(1);
                assertThat(bySecond).as("the other does not look").isEmpty();
                holder = first;
                String holderId = first.shared.instance();
                assertThat(holderId).isNotEqualTo(second.shared.instance()).matches("\\d+@.+/[0-9a-f]{8}");

                // The instance without the lease answers with the holder's look, named as the holder's.
                List<SharedStatus> elsewhere = second.shared.all();
                assertThat(elsewhere).singleElement().isInstanceOfSatisfying(SharedStatus.Observed.class, observed -> {
                    assertThat(observed.status()).isEqualTo(byFirst.getFirst());
                    assertThat(observed.observedBy()).isEqualTo(holderId);
                    assertThat(observed.stale()).isFalse();
                    assertThat(observed.status().diagnosis()).isInstanceOf(Diagnosis.RanksDown.class);
                    assertThat(observed.status().restarts()).isEqualTo(1);
                    assertThat(observed.uptime(observed.status().observation().ranks().getFirst(), clock.instant())).contains(Duration.ofSeconds(600));
                });
                // Both instances answer the same, the API's answer included.
                assertThat(first.shared.all()).isEqualTo(elsewhere);
                SupervisionResource.ClusterView view = SupervisionResource.ClusterView.of(elsewhere.getFirst(), clock.instant());
                assertThat(view.observedBy()).isEqualTo(holderId);
                assertThat(view.state()).startsWith("not serving: ");
                assertThat(view.ranks()).extracting(SupervisionResource.RankView::uptimeSeconds).containsExactly(600L, null);
                // The fleet view of the instance that does not supervise: each machine's rank as the holder saw it.
                Status worker = inference(inventory, elsewhere, clock.instant(), "studio-02");
                assertThat(worker.label()).isEqualTo("rank 1 down");
                assertThat(worker.detail()).contains("seen by " + holderId, "2026-11-23 23:00:00 UTC");
                assertThat(inference(inventory, elsewhere, clock.instant(), "studio-01").label()).isEqualTo("rank 0 degraded");

                // The holder stops looking (its round hangs): within the window still current, past it stale everywhere.
                clock.advance(SharedStatuses.staleAfter(INTERVAL));
                assertThat(second.shared.all()).singleElement().satisfies(status -> assertThat(status.stale()).isFalse());
                clock.advance(Duration.ofSeconds(1));
                List<SharedStatus> stale = second.shared.all();
                assertThat(stale).singleElement().satisfies(status -> {
                    assertThat(status.stale()).isTrue();
                    assertThat(status.lastSeen()).isEqualTo("last seen by " + holderId + " at 2026-11-23 23:00:00 UTC");
                });
                assertThat(first.shared.all()).isEqualTo(stale);
                SupervisionResource.ClusterView staleView = SupervisionResource.ClusterView.of(stale.getFirst(), clock.instant());
                assertThat(staleView.stale()).isTrue();
                assertThat(staleView.serving()).isFalse();
                assertThat(staleView.state()).startsWith("last seen by " + holderId + " at 2026-11-23 23:00:00 UTC: not serving: ");
                Status staleWorker = inference(inventory, stale, clock.instant(), "studio-02");
                assertThat(staleWorker.label()).isEqualTo("rank 1 last seen down");
                assertThat(staleWorker.level()).isEqualTo(Status.Level.WARNING);
                assertThat(staleWorker.detail()).contains("last seen by " + holderId + " at 2026-11-23 23:00:00 UTC", "31 s ago");
            }
            assertThat(holder.control.orders).containsExactly("restart llm-a");

            // The holder is gone (its session closed with it): the other takes the cluster over and answers with its own look.
            clock.advance(Duration.ofSeconds(1));
            assertThat(second.round(List.of(cluster), Map.of())).hasSize(1);
            assertThat(second.shared.all()).singleElement().satisfies(status -> {
                assertThat(status.observedBy()).isEqualTo(second.shared.instance());
                assertThat(status.stale()).isFalse();
                assertThat(status.observedAt()).isEqualTo(clock.instant());
            });
            try (AgroalDataSource reader = Database.open(postgres.settings())) {
                assertThat(new SupervisionStatusStore(reader).all(Instant.EPOCH)).singleElement()
                        .satisfies(status -> assertThat(status.observedBy()).isEqualTo(second.shared.instance()));

                // The cluster is no longer deployed (read in the same instant as the look: the look stays, it may be of a
                // deployment that finished meanwhile), then read a second later: its row goes, and no instance shows it.
                second.round(List.of(), Map.of());
                assertThat(new SupervisionStatusStore(reader).all(Instant.EPOCH)).hasSize(1);
                clock.advance(Duration.ofSeconds(1));
                second.round(List.of(), Map.of());
                assertThat(second.shared.all()).isEmpty();
                assertThat(new SupervisionStatusStore(reader).all(Instant.EPOCH)).isEmpty();
            }
        }
    }

    /** The database is gone while a round runs: the write fails and is logged, the round and its answer go on. */
    @Test
    void aStatusThatCannotBeWrittenStopsNeitherTheRoundNorThisInstancesAnswer() {
        ClusterSupervisorTest.TestClock clock = new ClusterSupervisorTest.TestClock();
        ClusterSupervisorTest.RecordingControl control = new ClusterSupervisorTest.RecordingControl();
        SupervisionLoop loop = new SupervisionLoop(new InMemoryLeases().instance("serve-1"), ClusterSupervisorTest.rankOneDown(clock),
                new ClusterSupervisor(new ClusterSupervisor.Settings(Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(20), 3),
                        control, event -> { }, clock));
        AgroalDataSource gone = PostgresServer.h2("supervision-gone");
        SharedStatuses shared = new SharedStatuses(new SupervisionStatusStore(gone), LeaseOwners.next(), INTERVAL, clock);
        gone.close();

        List<ClusterStatus> seen = loop.round(List.of(ClusterSupervisorTest.cluster(false)));
        shared.afterRound(seen, Map.of(), Set.of("llm-a"), clock.instant());

        assertThat(control.orders).containsExactly("restart llm-a");
        assertThat(shared.all()).singleElement().isEqualTo(new SharedStatus.Observed(seen.getFirst(), Map.of(), shared.instance(), false));
    }

    private Inventory exampleInventory() throws Exception {
        ExampleInventory.writeTo(directory, true);
        return InventoryLoader.load(directory).inventory();
    }

    /** The Inference cell of one machine in the fleet view built from these statuses (llm-a deployed and finished). */
    private static Status inference(Inventory inventory, List<SharedStatus> statuses, Instant now, String machine) {
        NodeDeploymentStore.Deployment deployed = new NodeDeploymentStore.Deployment(7, "llm-a", "/opt/node.jar", "ab", "0.1.0",
                "/models/llama-70b-q8_0.gguf", "cd", 1L, "serving", null, "cli:ops", now, now, Optional.of(now));
        FleetStatus.Fleet fleet = FleetStatus.fleet(now, inventory, Map.of(), Map.of(), Map.of(), List.of(new InferenceColumn()), Map.of(),
                FleetStatus.Nodes.of(Map.of("llm-a", deployed), statuses));
        return fleet.machine(machine).orElseThrow().status("Inference").orElseThrow();
    }
}
