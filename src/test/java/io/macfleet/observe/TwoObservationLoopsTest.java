package io.macfleet.observe;

import io.macfleet.facts.Reachability;
import io.macfleet.facts.ObservationStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.config.MacfleetConfig;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.database.PostgresServer;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.lease.AdvisoryLockLeases;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13, more than one service instance: two observation loops, each with its own connection pool and its own
 * PostgreSQL advisory-lock leases, on one real PostgreSQL server (Debian's binaries, see PostgresServer), ticking
 * side by side against simulated Macs. Every machine is observed, each by exactly one of them; when one stops, the
 * other takes its machines over and keeps observing them.
 */
class TwoObservationLoopsTest {

    private static final List<String> CLUSTER = List.of("studio-01", "studio-02", "studio-03", "studio-04");

    /** A one-second interval without jitter and short timeouts, so that rounds follow each other quickly. */
    private record Settings() implements MacfleetConfig.Observation {
        @Override
        public boolean enabled() {
            return true;
        }

        @Override
        public Duration interval() {
            return Duration.ofSeconds(1);
        }

        @Override
        public double jitter() {
            return 0;
        }

        @Override
        public int parallelism() {
            return 16;
        }

        @Override
        public Duration connectTimeout() {
            return Duration.ofSeconds(5);
        }

        @Override
        public Duration commandTimeout() {
            return Duration.ofSeconds(10);
        }
    }

    @RegisterExtension
    static final PostgresServer.PerClass postgres = new PostgresServer.PerClass();
    private static DatabaseSettings database;
    private static SimulatedInventory simulation;

    @BeforeAll
    static void start() throws Exception {
        database = postgres.settings();
        simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-two-loops"), 4, "127.0.6.41", database);
        simulation.cableFullMesh(CLUSTER);
        simulation.apply(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-a", CLUSTER)), Map.of());
    }

    @AfterAll
    static void stop() throws Exception {
        if (simulation != null) {
            simulation.close();
        }
    }

    @Test
    void eachMachineIsObservedByOneInstanceAndTheOtherTakesOverWhenItStops() throws Exception {
        ObservationStore reachability = new ObservationStore(simulation.dataSource);
        try (AgroalDataSource secondPool = Database.open(database);
             AdvisoryLockLeases firstLeases = new AdvisoryLockLeases(() -> Database.unpooledPostgresqlSession(database));
             AdvisoryLockLeases secondLeases = new AdvisoryLockLeases(() -> Database.unpooledPostgresqlSession(database))) {
            DesiredStateStore secondDesiredState = new DesiredStateStore(secondPool);
            ObservationLoop first = new ObservationLoop(new Settings(), simulation.facts, simulation.desiredState, firstLeases);
            ObservationLoop second = new ObservationLoop(new Settings(), new FactsService(secondPool, secondDesiredState), secondDesiredState, secondLeases);
            try {
                Instant began = Instant.now();
                // Both schedulers tick; every machine gets observed and seen.
                await(Duration.ofSeconds(90), () -> {
                    first.dispatchDue();
                    second.dispatchDue();
                    return CLUSTER.stream().allMatch(machine -> seenAfter(reachability, machine, began));
                });
                // A few more rounds of both, then: each machine is held by exactly one of them.
                Instant later = Instant.now();
                await(Duration.ofSeconds(90), () -> {
                    first.dispatchDue();
                    second.dispatchDue();
                    return CLUSTER.stream().allMatch(machine -> seenAfter(reachability, machine, later));
                });
                Set<String> byFirst = first.observing();
                Set<String> bySecond = second.observing();
                Set<String> byBoth = new HashSet<>(byFirst);
                byBoth.retainAll(bySecond);
                assertThat(byBoth).as("machines observed by both instances").isEmpty();
                Set<String> both = new HashSet<>(byFirst);
                both.addAll(bySecond);
                assertThat(both).containsExactlyInAnyOrderElementsOf(CLUSTER);

                // The instance holding the machines goes away (its sessions end): the other takes them over.
                ObservationLoop leaving = byFirst.isEmpty() ? second : first;
                ObservationLoop staying = leaving == first ? second : first;
                Set<String> handedOver = leaving.observing();
                assertThat(handedOver).isNotEmpty();
                leaving.stop();
                (leaving == first ? firstLeases : secondLeases).close();
                Instant stopped = Instant.now();
                await(Duration.ofSeconds(90), () -> {
                    staying.dispatchDue();
                    return handedOver.stream().allMatch(machine -> seenAfter(reachability, machine, stopped));
                });
                assertThat(staying.observing()).containsExactlyInAnyOrderElementsOf(CLUSTER);
            } finally {
                first.stop();
                second.stop();
            }
        }
    }

    private static boolean seenAfter(ObservationStore reachability, String machine, Instant instant) {
        return reachability.of(machine).flatMap(Reachability::lastSeenAt).filter(seen -> seen.isAfter(instant)).isPresent();
    }

    private static void await(Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition not met within " + limit).isLessThan(deadline);
            Thread.sleep(200);
        }
    }
}
