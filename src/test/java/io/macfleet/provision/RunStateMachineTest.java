package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The run's and the machines' transition tables, and the timing of an operator step's verification on a made-up clock. */
class RunStateMachineTest {

    /** A clock the test moves. */
    static final class TestClock extends Clock {
        Instant now = Instant.parse("2026-11-28T21:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
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

    @Test
    void runStatesKeepTheirStoredLabelsAndFollowTheTable() {
        assertThat(List.of(RunState.values())).extracting(RunState::label)
                .containsExactly("running", "waiting-for-operator", "succeeded", "failed", "interrupted");
        assertThat(RunState.fromLabel("waiting-for-operator")).isEqualTo(RunState.WAITING_FOR_OPERATOR);
        assertThat(RunState.RUNNING.to(RunState.SUCCEEDED)).isEqualTo(RunState.SUCCEEDED);
        assertThat(RunState.RUNNING.mayBecome(RunState.RUNNING)).as("lease lost: stays running for the next process").isTrue();
        assertThat(RunState.FAILED.mayBecome(RunState.RUNNING)).as("resumed").isTrue();
        assertThat(RunState.WAITING_FOR_OPERATOR.mayBecome(RunState.RUNNING)).as("resumed after a confirmation").isTrue();
        assertThat(RunState.WAITING_FOR_OPERATOR.mayBecome(RunState.SUCCEEDED)).as("only by running again").isFalse();
        assertThat(RunState.RUNNING.mayBecome(RunState.INTERRUPTED)).as("shown, never stored").isFalse();
        assertThat(RunState.SUCCEEDED.mayBecome(RunState.FAILED)).isFalse();
        assertThatThrownBy(() -> RunState.FAILED.to(RunState.SUCCEEDED)).isInstanceOf(RunState.IllegalTransitionException.class)
                .hasMessage("a provisioning run cannot go from failed to succeeded");
        assertThatThrownBy(() -> RunState.fromLabel("done")).hasMessage("unknown run status done");
        assertThat(RunState.SUCCEEDED.finished()).isTrue();
        assertThat(RunState.WAITING_FOR_OPERATOR.finished()).isFalse();
    }

    @Test
    void aMachineEndsOnceInAnExecutionAndTheRunFollowsItsMachines() {
        assertThat(List.of(MachineState.values())).extracting(MachineState::label)
                .containsExactly("in-progress", "ready", "failed", "waiting-for-operator");
        assertThatThrownBy(() -> MachineState.READY.to("studio-01", MachineState.FAILED))
                .isInstanceOf(MachineState.IllegalTransitionException.class)
                .hasMessage("studio-01 cannot go from ready to failed in a provisioning run");

        RunProgress progress = new RunProgress();
        progress.move("studio-01", MachineState.READY, "rdma: done");
        assertThat(progress.result(false)).isEqualTo(RunState.SUCCEEDED);
        progress.move("studio-02", MachineState.WAITING_FOR_OPERATOR, "rdma: waiting for a person");
        assertThat(progress.result(false)).isEqualTo(RunState.WAITING_FOR_OPERATOR);
        progress.move("studio-03", MachineState.FAILED, "rdma: no answer");
        assertThat(progress.result(false)).isEqualTo(RunState.FAILED);
        assertThat(progress.result(true)).as("lease lost: the run is someone else's").isEqualTo(RunState.RUNNING);
        assertThatThrownBy(() -> progress.move("studio-01", MachineState.IN_PROGRESS, null))
                .hasMessage("studio-01 cannot go from ready to in-progress in a provisioning run");
        assertThat(progress.labels(List.of("studio-03", "studio-01", "studio-04")))
                .containsExactly(Map.entry("studio-03", "failed"), Map.entry("studio-01", "ready"), Map.entry("studio-04", "in-progress"));
        assertThat(progress.messages(List.of("studio-01", "studio-04"))).containsExactly(Map.entry("studio-01", "rdma: done"), Map.entry("studio-04", ""));
    }

    /** A walkthrough whose machine does not answer (in Recovery, or hung) until the test says so. */
    static final class HungMac implements OperatorWalkthrough {
        final TestClock clock;
        final List<Instant> verifiedAt = new ArrayList<>();
        Instant answersFrom = Instant.MAX;
        CheckResult whenAnswering = CheckResult.satisfied("rdma_ctl status: enabled");

        HungMac(TestClock clock) {
            this.clock = clock;
        }

        @Override
        public OperatorRequest request(long runId, String step, MachineContext context, String whatIsWrong) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean verifiable() {
            return true;
        }

        @Override
        public CheckResult verify(MachineContext context, boolean freshConnection) {
            verifiedAt.add(clock.instant());
            return clock.instant().isBefore(answersFrom) ? CheckResult.notSatisfied("studio-01 does not answer on SSH") : whenAnswering;
        }

        @Override
        public boolean unreachable(CheckResult verification) {
            return verification.detail().contains("does not answer");
        }

        @Override
        public int timeoutSeconds() {
            return 120;
        }

        @Override
        public int pollSeconds() {
            return 5;
        }
    }

    final TestClock clock = new TestClock();
    final HungMac mac = new HungMac(clock);
    final OperatorSteps operatorSteps = new OperatorSteps(null, null, clock, new RunLease(null, 1, "test", Duration.ofSeconds(60), clock), clock::advance);
    final MachineContext context = new MachineContext("studio-01", null, null, List.of(), null, null, null, null, false, Map.of(), clock);

    CheckResult verify() {
        return operatorSteps.verifyAfterConfirmation(mac, context, "studio-01", "rdma-enabled", ProvisioningListener.SILENT);
    }

    @Test
    void aHungMacCostsItsVerificationTimeoutOnceAndNotASecondMore() {
        Instant confirmed = clock.instant();
        CheckResult result = verify();
        assertThat(result.satisfied()).isFalse();
        assertThat(result.detail()).isEqualTo("studio-01 does not answer on SSH (waited 120 s)");
        assertThat(Duration.between(confirmed, clock.instant())).isEqualTo(Duration.ofSeconds(120));
        // Polled every 5 s, the last one at the deadline: 25 looks, none after it.
        assertThat(mac.verifiedAt).hasSize(25).last().isEqualTo(confirmed.plusSeconds(120));
    }

    @Test
    void aMacBackFromItsRebootIsVerifiedAtTheFirstPollThatReachesIt() {
        Instant confirmed = clock.instant();
        mac.answersFrom = confirmed.plusSeconds(42);
        assertThat(verify().satisfied()).isTrue();
        assertThat(clock.instant()).isEqualTo(confirmed.plusSeconds(45));
    }

    @Test
    void aMacThatAnswersTwiceAndIsStillWrongIsNotWaitedFor() {
        Instant confirmed = clock.instant();
        mac.answersFrom = confirmed;
        mac.whenAnswering = CheckResult.notSatisfied("rdma_ctl status: disabled");
        CheckResult result = verify();
        assertThat(result.detail()).isEqualTo("rdma_ctl status: disabled");
        assertThat(clock.instant()).isEqualTo(confirmed.plusSeconds(5));
    }
}
