package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The supervisor's phases and its decisions as a pure function of (incident, diagnosis, time): no sleeping, no machines. */
class SupervisionDecisionTest {

    static final ClusterSupervisor.Settings SETTINGS = new ClusterSupervisor.Settings(Duration.ofSeconds(10), Duration.ofSeconds(5),
            Duration.ofSeconds(20), 3);
    static final Diagnosis DOWN = new Diagnosis.RanksDown(List.of("rank 1 (studio-02) does not answer"), false);
    static final Diagnosis RDMA = new Diagnosis.RdmaFailure(List.of("studio-02"), List.of("ibv_devinfo did not answer within 3 s"));

    final ClusterSupervisorTest.TestClock clock = new ClusterSupervisorTest.TestClock();
    IncidentState state = IncidentState.FIRST;

    SupervisionDecision look(Diagnosis diagnosis, boolean rebootOnRdma) {
        SupervisionDecision decision = SupervisionDecision.decide(state, diagnosis, ClusterSupervisorTest.cluster(rebootOnRdma), SETTINGS, clock.instant());
        state = decision.next();
        return decision;
    }

    @Test
    void theTableAllowsTheIncidentPathsAndRefusesARestartOnceAnAlertIsOpen() {
        assertThat(ClusterPhase.WATCHING.mayBecome(ClusterPhase.WAITING_FOR_LAUNCHD)).isTrue();
        assertThat(ClusterPhase.WAITING_FOR_LAUNCHD.mayBecome(ClusterPhase.RESTARTING)).isTrue();
        assertThat(ClusterPhase.RESTARTING.mayBecome(ClusterPhase.ALERTED)).isTrue();
        assertThat(ClusterPhase.ALERTED.mayBecome(ClusterPhase.WATCHING)).isTrue();
        assertThat(ClusterPhase.ALERTED.mayBecome(ClusterPhase.REBOOTING)).as("RDMA's once-per-incident reboot").isTrue();
        assertThat(ClusterPhase.RESTARTING.mayBecome(ClusterPhase.WAITING_FOR_LAUNCHD)).isFalse();
        assertThatThrownBy(() -> ClusterPhase.ALERTED.to(ClusterPhase.RESTARTING))
                .isInstanceOf(ClusterPhase.IllegalTransitionException.class)
                .hasMessage("cluster supervision cannot go from ALERTED to RESTARTING");
    }

    @Test
    void launchdGetsItsGraceThenRestartsBackOffDoublingUpToTheMaximumThenTheSupervisorGivesUpForGood() {
        assertThat(look(DOWN, false).order()).isEqualTo(SupervisionDecision.Order.NONE);
        assertThat(state.phase()).isEqualTo(ClusterPhase.WAITING_FOR_LAUNCHD);
        clock.advance(Duration.ofSeconds(9));
        assertThat(look(DOWN, false).order()).as("9 s of 10 s grace").isEqualTo(SupervisionDecision.Order.NONE);
        clock.advance(Duration.ofSeconds(1));
        assertThat(look(DOWN, false).order()).isEqualTo(SupervisionDecision.Order.RESTART_IN_ORDER);
        assertThat(state.phase()).isEqualTo(ClusterPhase.RESTARTING);
        // Back-off 5 s after the first restart, 10 s after the second: one instant early orders nothing.
        for (Duration backoff : List.of(Duration.ofSeconds(5), Duration.ofSeconds(10))) {
            clock.advance(backoff.minusMillis(1));
            assertThat(look(DOWN, false).order()).isEqualTo(SupervisionDecision.Order.NONE);
            clock.advance(Duration.ofMillis(1));
            assertThat(look(DOWN, false).order()).isEqualTo(SupervisionDecision.Order.RESTART_IN_ORDER);
        }
        assertThat(state.restarts()).isEqualTo(3);
        assertThat(SupervisionDecision.backoff(SETTINGS, 4)).as("capped at the maximum").isEqualTo(Duration.ofSeconds(20));
        clock.advance(Duration.ofSeconds(20));
        SupervisionDecision gaveUp = look(DOWN, false);
        assertThat(gaveUp.events()).extracting(SupervisionDecision.Event::kind).containsExactly(SupervisionEvent.Kind.GAVE_UP);
        assertThat(state.phase()).isEqualTo(ClusterPhase.ALERTED);
        // Proving that nothing more happens needs no waiting: a day later, still nothing ordered and nothing said.
        clock.advance(Duration.ofDays(1));
        SupervisionDecision dayLater = look(DOWN, false);
        assertThat(dayLater.order()).isEqualTo(SupervisionDecision.Order.NONE);
        assertThat(dayLater.events()).isEmpty();
        SupervisionDecision serving = look(new Diagnosis.Serving(), false);
        assertThat(serving.events()).extracting(SupervisionDecision.Event::kind).containsExactly(SupervisionEvent.Kind.RECOVERED);
        assertThat(state).isEqualTo(new IncidentState(ClusterPhase.WATCHING, null, 0, Instant.EPOCH, null, null, false, null, clock.instant()));
    }

    @Test
    void aCrashLoopIsRestartedWithoutTheGrace() {
        assertThat(look(new Diagnosis.RanksDown(List.of("rank 1 restarted by launchd and failing"), true), false).order())
                .isEqualTo(SupervisionDecision.Order.RESTART_IN_ORDER);
        assertThat(state.phase()).isEqualTo(ClusterPhase.RESTARTING);
    }

    @Test
    void rdmaIsRebootedOncePerIncidentAndAFailureAfterTheRebootAlertsOnceTheNodeHadItsTimeToStart() {
        assertThat(look(RDMA, true).order()).isEqualTo(SupervisionDecision.Order.REBOOT_VERIFY_AND_START);
        assertThat(state.phase()).isEqualTo(ClusterPhase.REBOOTING);
        clock.advance(Duration.ofMinutes(3));
        state = state.rebooted(clock.instant());
        clock.advance(Duration.ofSeconds(9));
        SupervisionDecision early = look(RDMA, true);
        assertThat(early.order()).as("never a second reboot").isEqualTo(SupervisionDecision.Order.NONE);
        assertThat(early.events()).as("the node's log may still end with the old errors").isEmpty();
        clock.advance(Duration.ofSeconds(1));
        SupervisionDecision again = look(RDMA, true);
        assertThat(again.order()).isEqualTo(SupervisionDecision.Order.NONE);
        assertThat(again.events()).extracting(SupervisionDecision.Event::kind).containsExactly(SupervisionEvent.Kind.RDMA_REBOOT_FAILED);
        assertThat(state.phase()).isEqualTo(ClusterPhase.ALERTED);
        clock.advance(Duration.ofHours(1));
        assertThat(look(RDMA, true).events()).isEmpty();
        // Serving closes the incident: the next RDMA failure is a new one and may be rebooted again.
        look(new Diagnosis.Serving(), true);
        assertThat(look(RDMA, true).order()).isEqualTo(SupervisionDecision.Order.REBOOT_VERIFY_AND_START);
    }

    @Test
    void withoutTheRebootPolicyRdmaIsRecommendedOnce() {
        SupervisionDecision first = look(RDMA, false);
        assertThat(first.order()).isEqualTo(SupervisionDecision.Order.NONE);
        assertThat(first.events()).extracting(SupervisionDecision.Event::kind).containsExactly(SupervisionEvent.Kind.RDMA_REBOOT_RECOMMENDED);
        clock.advance(Duration.ofMinutes(10));
        assertThat(look(RDMA, false).events()).isEmpty();
        assertThat(state.phase()).isEqualTo(ClusterPhase.ALERTED);
    }

    @Test
    void aClusterWithoutANodeIsForgotten() {
        assertThat(look(new Diagnosis.NotDeployed(), false).order()).isEqualTo(SupervisionDecision.Order.FORGET);
    }
}
