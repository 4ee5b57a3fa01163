package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.deployment.LaunchdService;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ClusterSupervisorTest {

    /** A clock the test moves. */
    static final class TestClock extends Clock {
        Instant now = Instant.parse("2026-11-23T23:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }

        void advance(Duration duration) {
            now = now.plus(duration);
        }
    }

    /** Records what the supervisor ordered. */
    static final class RecordingControl implements ClusterSupervisor.Control {
        final List<String> orders = new ArrayList<>();
        boolean rebootFails;

        @Override
        public void restartInOrder(SupervisedCluster cluster) {
            orders.add("restart " + cluster.name());
        }

        @Override
        public void rebootVerifyAndStart(SupervisedCluster cluster) throws java.io.IOException {
            orders.add("reboot " + cluster.name());
            if (rebootFails) {
                throw new java.io.IOException("studio-02: ibv_devinfo still does not answer after the reboot");
            }
        }
    }

    final TestClock clock = new TestClock();
    final RecordingControl control = new RecordingControl();
    final List<SupervisionEvent> events = new ArrayList<>();
    final ClusterSupervisor supervisor = new ClusterSupervisor(
            new ClusterSupervisor.Settings(Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(20), 3),
            control, events::add, clock);

    static SupervisedCluster cluster(boolean rebootOnRdma) {
        return new SupervisedCluster("llm-a", URI.create("http://10.0.0.11:8080/"), new SupervisedCluster.Policy(rebootOnRdma), List.of(
                new SupervisedCluster.Rank(0, "studio-01", URI.create("http://10.0.0.11:8080/"), "io.macfleet.node", "/var/log/macfleet/io.macfleet.node.err.log"),
                new SupervisedCluster.Rank(1, "studio-02", URI.create("http://10.0.0.12:8080/"), "io.macfleet.node", "/var/log/macfleet/io.macfleet.node.err.log")));
    }

    static RankObservation rank(int rank, RankObservation.Health health, int runs, String version) {
        boolean running = health != RankObservation.Health.UNREACHABLE;
        LaunchdService launchd = new LaunchdService(true, running ? "running" : "not running",
                running ? OptionalLong.of(100 + rank) : OptionalLong.empty(), OptionalInt.of(runs),
                running ? new LaunchdService.LastExit.NeverExited() : new LaunchdService.LastExit.Code(1, ""));
        return new RankObservation(rank, "studio-0" + (rank + 1), health, health == RankObservation.Health.SERVING ? "" : "rank 1 is missing",
                Optional.of(launchd), Optional.ofNullable(version), Optional.ofNullable(version == null ? null : "189280 bytes, header sha256 7a9a"),
                RankObservation.Rdma.NOT_IN_USE, "", Optional.empty(), OptionalDouble.empty(), OptionalDouble.empty());
    }

    /** A probe that finds rank 0 degraded and rank 1 unreachable, at the clock's time. */
    static ClusterProbe rankOneDown(TestClock clock) {
        return cluster -> new ClusterObservation(cluster, clock.instant(), List.of(rank(0, RankObservation.Health.DEGRADED, 1, "1.0"),
                rank(1, RankObservation.Health.UNREACHABLE, 1, null)));
    }

    ClusterObservation look(SupervisedCluster cluster, RankObservation... ranks) {
        return new ClusterObservation(cluster, clock.instant(), List.of(ranks));
    }

    List<SupervisionEvent.Kind> kinds() {
        return events.stream().map(SupervisionEvent::kind).toList();
    }

    @Test
    void aRankDownIsLeftToLaunchdForTheGraceThenTheClusterRestartsWithBackoffAndAlertsAfterTheAttempts() {
        SupervisedCluster cluster = cluster(false);
        ClusterStatus serving = supervisor.observe(look(cluster, rank(0, RankObservation.Health.SERVING, 1, "1.0"), rank(1, RankObservation.Health.SERVING, 1, "1.0")));
        assertThat(serving.serving()).isTrue();
        // Rank 1 is down with the same run count (launchd has not restarted it yet): patience first.
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 1, null)));
        clock.advance(Duration.ofSeconds(5));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 1, null)));
        assertThat(control.orders).isEmpty();
        clock.advance(Duration.ofSeconds(5));
        ClusterStatus first = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 1, null)));
        assertThat(control.orders).containsExactly("restart llm-a");
        assertThat(first.restarts()).isEqualTo(1);
        // Looks during the back-off order nothing more: a restart is never ordered twice.
        clock.advance(Duration.ofSeconds(2));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.STARTING, 2, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 1, null)));
        assertThat(control.orders).hasSize(1);
        // Back-off 5 s, then 10 s, then the attempts are spent.
        clock.advance(Duration.ofSeconds(3));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 2, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 2, null)));
        assertThat(control.orders).hasSize(2);
        clock.advance(Duration.ofSeconds(9));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 3, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 3, null)));
        assertThat(control.orders).hasSize(2);
        clock.advance(Duration.ofSeconds(1));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 3, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 3, null)));
        assertThat(control.orders).hasSize(3);
        clock.advance(Duration.ofSeconds(20));
        ClusterStatus gaveUp = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 4, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 4, null)));
        assertThat(control.orders).hasSize(3);
        assertThat(gaveUp.alert()).hasValueSatisfying(alert -> assertThat(alert).startsWith("gave up after 3 restart(s)")
                .contains("rank 1 (studio-02)"));
        assertThat(kinds()).containsExactly(SupervisionEvent.Kind.RESTART_ORDERED, SupervisionEvent.Kind.RESTART_ORDERED,
                SupervisionEvent.Kind.RESTART_ORDERED, SupervisionEvent.Kind.GAVE_UP);
        // Stopped: no more orders, however long it stays down, until it serves or an operator restarts it.
        clock.advance(Duration.ofMinutes(5));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 9, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 9, null)));
        assertThat(control.orders).hasSize(3);
        ClusterStatus back = supervisor.observe(look(cluster, rank(0, RankObservation.Health.SERVING, 9, "1.0"), rank(1, RankObservation.Health.SERVING, 9, "1.0")));
        assertThat(back.alert()).isEmpty();
        assertThat(kinds().getLast()).isEqualTo(SupervisionEvent.Kind.RECOVERED);
    }

    @Test
    void aCrashLoopSkipsThePatience() {
        SupervisedCluster cluster = cluster(false);
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.SERVING, 1, "1.0"), rank(1, RankObservation.Health.SERVING, 1, "1.0")));
        // One restart by launchd (a single crash, e.g. kill -9) gets the patience: the node re-forms by itself.
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), rank(1, RankObservation.Health.STARTING, 2, null)));
        assertThat(control.orders).isEmpty();
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 3, null)));
        assertThat(control.orders).containsExactly("restart llm-a");
        assertThat(events.getFirst().detail()).contains("restarting in a loop").contains("launchd restarted it, 3 runs");
    }

    @Test
    void aRankOnAnotherVersionIsRefusedByNameWithTheDeployThatFixesItAndNeverRestarted() {
        SupervisedCluster cluster = cluster(false);
        RankObservation rank1 = rank(1, RankObservation.Health.STARTING, 1, "9.9.9");
        ClusterStatus status = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "0.1.0"), rank1));
        clock.advance(Duration.ofMinutes(1));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "0.1.0"), rank(1, RankObservation.Health.STARTING, 3, "9.9.9")));
        assertThat(control.orders).isEmpty();
        assertThat(kinds()).containsExactly(SupervisionEvent.Kind.SKEW_REFUSED);
        assertThat(status.alert()).hasValue("refusing to form: rank 1 (studio-02) has node version 9.9.9, the other ranks have 0.1.0:"
                + " the cluster refuses to form; fix: macfleet node deploy llm-a");
    }

    @Test
    void theRefusalTheNodeLoggedNamesTheOddRankWhenItsMetricsAreGone() {
        SupervisedCluster cluster = cluster(false);
        RankObservation refused = new RankObservation(1, "studio-02", RankObservation.Health.UNREACHABLE, "", Optional.empty(),
                Optional.empty(), Optional.empty(), RankObservation.Rdma.UNKNOWN, "",
                Optional.of("model differs: rank 0 has 189280 bytes, header sha256 7a9a1a052ea3245e, rank 1 has 670560 bytes, header sha256 2fef11ef7bf9069e"),
                OptionalDouble.empty(), OptionalDouble.empty());
        ClusterStatus status = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), refused));
        assertThat(status.diagnosis()).isEqualTo(new Diagnosis.Skew(1, "studio-02", "model", "670560 bytes, header sha256 2fef11ef7bf9069e",
                "189280 bytes, header sha256 7a9a1a052ea3245e", "macfleet node deploy llm-a"));
    }

    static RankObservation wedged(int rank) {
        return new RankObservation(rank, "studio-0" + (rank + 1), RankObservation.Health.UNREACHABLE, "", Optional.empty(),
                Optional.empty(), Optional.empty(), RankObservation.Rdma.NOT_ANSWERING, "ibv_devinfo did not answer within 5 s",
                Optional.empty(), OptionalDouble.empty(), OptionalDouble.empty());
    }

    @Test
    void wedgedRdmaIsRebootedOnceWhenThePolicyAllowsIt() {
        SupervisedCluster cluster = cluster(true);
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 3, "1.0"), wedged(1)));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 4, "1.0"), wedged(1)));
        assertThat(control.orders).containsExactly("reboot llm-a");
        assertThat(kinds()).containsExactly(SupervisionEvent.Kind.RDMA_REBOOT_ORDERED, SupervisionEvent.Kind.RDMA_REBOOT_DONE);
        assertThat(events.getFirst().detail()).contains("[studio-01, studio-02]").contains("studio-02: ibv_devinfo did not answer within 5 s");
        // Wedged again before it served (once the node had restart-after to start): no second reboot, an alert instead.
        clock.advance(Duration.ofSeconds(10));
        ClusterStatus again = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 5, "1.0"), wedged(1)));
        assertThat(control.orders).containsExactly("reboot llm-a");
        assertThat(again.alert()).hasValueSatisfying(alert -> assertThat(alert).startsWith("RDMA failed again after the coordinated reboot"));
        assertThat(kinds().getLast()).isEqualTo(SupervisionEvent.Kind.RDMA_REBOOT_FAILED);
    }

    @Test
    void aRebootThatDoesNotRecoverRdmaAlertsAndIsNotRepeated() {
        SupervisedCluster cluster = cluster(true);
        control.rebootFails = true;
        ClusterStatus status = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 3, "1.0"), wedged(1)));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 3, "1.0"), wedged(1)));
        assertThat(control.orders).containsExactly("reboot llm-a");
        assertThat(supervisor.alert("llm-a")).hasValueSatisfying(alert -> assertThat(alert)
                .contains("studio-02: ibv_devinfo still does not answer after the reboot"));
        assertThat(status.diagnosis()).isInstanceOf(Diagnosis.RdmaFailure.class);
    }

    @Test
    void wedgedRdmaIsOnlyRecommendedWhenThePolicyDoesNotAllowTheReboot() {
        SupervisedCluster cluster = cluster(false);
        ClusterStatus status = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 3, "1.0"), wedged(1)));
        clock.advance(Duration.ofMinutes(2));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 3, "1.0"), wedged(1)));
        assertThat(control.orders).isEmpty();
        assertThat(kinds()).containsExactly(SupervisionEvent.Kind.RDMA_REBOOT_RECOMMENDED);
        assertThat(status.alert()).hasValueSatisfying(alert -> assertThat(alert)
                .contains("Recommended: reboot every machine of cluster llm-a together (studio-01, studio-02")
                .contains("supervision.rdmaFailure: reboot"));
    }

    @Test
    void twoInstancesSharingTheLeasesOrderTheRestartOnceAndTheOtherTakesOverWhenTheFirstIsGone() {
        SupervisedCluster cluster = cluster(false);
        InMemoryLeases leases = new InMemoryLeases();
        RecordingControl secondControl = new RecordingControl();
        ClusterSupervisor second = new ClusterSupervisor(new ClusterSupervisor.Settings(Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(20), 3),
                secondControl, events::add, clock);
        ClusterSupervisor first = new ClusterSupervisor(new ClusterSupervisor.Settings(Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(20), 3),
                control, events::add, clock);
        ClusterProbe down = c -> look(c, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 1, null));
        SupervisionLoop a = new SupervisionLoop(leases.instance("serve-a"), down, first);
        SupervisionLoop b = new SupervisionLoop(leases.instance("serve-b"), down, second);
        assertThat(a.round(List.of(cluster))).hasSize(1);
        assertThat(b.round(List.of(cluster))).isEmpty();
        assertThat(control.orders).containsExactly("restart llm-a");
        assertThat(secondControl.orders).isEmpty();
        // serve-a's database connection breaks: serve-b takes the cluster over on its next round.
        leases.breakConnection("serve-a");
        clock.advance(Duration.ofSeconds(1));
        assertThat(b.round(List.of(cluster))).hasSize(1);
        assertThat(secondControl.orders).containsExactly("restart llm-a");
        // serve-a sees it lost the lease and does nothing.
        assertThat(a.round(List.of(cluster))).isEmpty();
        assertThat(control.orders).hasSize(1);
    }

    /** An executor that holds the actions until the test runs them: what the service's virtual threads do, one step at a time. */
    static final class HeldActions implements java.util.concurrent.Executor {
        final java.util.ArrayDeque<Runnable> held = new java.util.ArrayDeque<>();

        @Override
        public void execute(Runnable action) {
            held.add(action);
        }

        void runAll() {
            while (!held.isEmpty()) {
                held.poll().run();
            }
        }
    }

    @Test
    void aRebootUnderWayIsReportedAndTheLooksDuringItChangeNothing() {
        HeldActions actions = new HeldActions();
        ClusterSupervisor supervisor = new ClusterSupervisor(
                new ClusterSupervisor.Settings(Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(20), 3),
                control, events::add, clock, actions);
        SupervisedCluster cluster = cluster(true);
        ClusterStatus ordered = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 3, "1.0"), wedged(1)));
        // The look returns at once: the reboot waits on the executor, and the status says it is under way.
        assertThat(control.orders).isEmpty();
        assertThat(actions.held).hasSize(1);
        assertThat(ordered.acting()).hasValue(new ClusterSupervisor.Acting("coordinated reboot", clock.instant()));
        // Looks in the middle of the reboot see every machine down: that is the reboot working, not a new incident.
        clock.advance(Duration.ofSeconds(30));
        ClusterStatus during = supervisor.observe(look(cluster, rank(0, RankObservation.Health.UNREACHABLE, 3, null),
                rank(1, RankObservation.Health.UNREACHABLE, 3, null)));
        clock.advance(Duration.ofSeconds(30));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.UNREACHABLE, 3, null), wedged(1)));
        assertThat(during.acting()).isPresent();
        assertThat(actions.held).hasSize(1);
        assertThat(kinds()).containsExactly(SupervisionEvent.Kind.RDMA_REBOOT_ORDERED);
        actions.runAll();
        assertThat(control.orders).containsExactly("reboot llm-a");
        assertThat(kinds()).containsExactly(SupervisionEvent.Kind.RDMA_REBOOT_ORDERED, SupervisionEvent.Kind.RDMA_REBOOT_DONE);
        ClusterStatus after = supervisor.observe(look(cluster, rank(0, RankObservation.Health.SERVING, 1, "1.0"), rank(1, RankObservation.Health.SERVING, 1, "1.0")));
        assertThat(after.acting()).isEmpty();
        assertThat(after.serving()).isTrue();
    }

    @Test
    void anOrderedRestartRunsOnTheExecutorAndIsNotOrderedAgainWhileItRuns() {
        HeldActions actions = new HeldActions();
        ClusterSupervisor supervisor = new ClusterSupervisor(
                new ClusterSupervisor.Settings(Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(20), 3),
                control, events::add, clock, actions);
        SupervisedCluster cluster = cluster(false);
        ClusterStatus first = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 1, null)));
        assertThat(first.acting()).hasValueSatisfying(acting -> assertThat(acting.what()).isEqualTo("ordered restart 1"));
        // Past the back-off and still down, but the first restart has not finished: nothing more is ordered.
        clock.advance(Duration.ofSeconds(6));
        supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 1, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 1, null)));
        assertThat(actions.held).hasSize(1);
        assertThat(kinds()).containsExactly(SupervisionEvent.Kind.RESTART_ORDERED);
        actions.runAll();
        assertThat(control.orders).containsExactly("restart llm-a");
        // Once it has run, the next look decides afresh: still down after the back-off, so the second restart.
        ClusterStatus second = supervisor.observe(look(cluster, rank(0, RankObservation.Health.DEGRADED, 2, "1.0"), rank(1, RankObservation.Health.UNREACHABLE, 2, null)));
        assertThat(second.acting()).hasValueSatisfying(acting -> assertThat(acting.what()).isEqualTo("ordered restart 2"));
        assertThat(second.restarts()).isEqualTo(2);
    }

    @Test
    void everyClusterIsLookedAtAtOnceAndOneFailingLookCostsOnlyItsCluster() {
        SupervisedCluster a = cluster(false);
        SupervisedCluster b = new SupervisedCluster("llm-b", URI.create("http://10.0.1.11:8080/"), new SupervisedCluster.Policy(false),
                List.of(new SupervisedCluster.Rank(0, "studio-05", URI.create("http://10.0.1.11:8080/"), "io.macfleet.node", "/var/log/n.log")));
        SupervisedCluster c = new SupervisedCluster("llm-c", URI.create("http://10.0.2.11:8080/"), new SupervisedCluster.Policy(false),
                List.of(new SupervisedCluster.Rank(0, "studio-06", URI.create("http://10.0.2.11:8080/"), "io.macfleet.node", "/var/log/n.log")));
        // llm-a's look cannot finish before llm-b's has started: looked at one after the other, in order, this round
        // would wait for the latch's whole 20 s and fail; looked at together, it does not wait.
        java.util.concurrent.CountDownLatch bStarted = new java.util.concurrent.CountDownLatch(1);
        ClusterProbe probe = cluster -> {
            switch (cluster.name()) {
                case "llm-a" -> {
                    try {
                        assertThat(bStarted.await(20, java.util.concurrent.TimeUnit.SECONDS)).as("llm-b looked at meanwhile").isTrue();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return look(cluster, rank(0, RankObservation.Health.SERVING, 1, "1.0"), rank(1, RankObservation.Health.SERVING, 1, "1.0"));
                }
                case "llm-b" -> {
                    bStarted.countDown();
                    throw new IllegalStateException("the probe of llm-b broke");
                }
                default -> {
                    return look(cluster, rank(0, RankObservation.Health.SERVING, 1, "1.0"));
                }
            }
        };
        SupervisionLoop loop = new SupervisionLoop(new InMemoryLeases().instance("serve-1"), probe, supervisor);
        List<ClusterStatus> statuses = loop.round(List.of(a, b, c));
        assertThat(statuses).extracting(ClusterStatus::name).containsExactly("llm-a", "llm-c");
        assertThat(statuses).allSatisfy(status -> assertThat(status.serving()).isTrue());
    }
}
