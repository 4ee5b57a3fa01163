package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.database.Database;
import io.macfleet.database.PostgresServer;
import io.macfleet.lease.AdvisoryLockLeases;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two "macfleet serve" instances supervise one cluster through the real lease implementation on one real PostgreSQL
 * server (session advisory locks): the restart is ordered once, by the holder; when the holder's session ends, the
 * other takes the cluster over.
 */
class TwoServeInstancesTest {

    @RegisterExtension
    static final PostgresServer.PerClass postgres = new PostgresServer.PerClass();

    @Test
    void onlyTheLeaseHolderOrdersTheRestartAndTheOtherTakesOverWhenItsSessionEnds() throws Exception {
        ClusterSupervisorTest.TestClock clock = new ClusterSupervisorTest.TestClock();
        SupervisedCluster cluster = ClusterSupervisorTest.cluster(false);
        ClusterProbe down = ClusterSupervisorTest.rankOneDown(clock);
        ClusterSupervisor.Settings patienceNone = new ClusterSupervisor.Settings(Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(20), 3);
        ClusterSupervisorTest.RecordingControl firstControl = new ClusterSupervisorTest.RecordingControl();
        ClusterSupervisorTest.RecordingControl secondControl = new ClusterSupervisorTest.RecordingControl();
        List<SupervisionEvent> events = new ArrayList<>();
        try (AdvisoryLockLeases secondLeases = new AdvisoryLockLeases(() -> Database.unpooledPostgresqlSession(postgres.settings()))) {
            SupervisionLoop second = new SupervisionLoop(secondLeases, down, new ClusterSupervisor(patienceNone, secondControl, events::add, clock));
            try (AdvisoryLockLeases firstLeases = new AdvisoryLockLeases(() -> Database.unpooledPostgresqlSession(postgres.settings()))) {
                SupervisionLoop first = new SupervisionLoop(firstLeases, down, new ClusterSupervisor(patienceNone, firstControl, events::add, clock));
                for (int round = 0; round < 3; round++) {
                    first.round(List.of(cluster));
                    second.round(List.of(cluster));
                }
                assertThat(firstControl.orders).containsExactly("restart llm-a");
                assertThat(secondControl.orders).isEmpty();
            }
            // The first instance is gone (its session closed with it): the second supervises from its next round.
            clock.advance(Duration.ofSeconds(1));
            assertThat(second.round(List.of(cluster))).hasSize(1);
            assertThat(secondControl.orders).containsExactly("restart llm-a");
            assertThat(firstControl.orders).hasSize(1);
        }
    }
}
