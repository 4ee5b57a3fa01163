package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The transition tables, written out here a second time by hand: a transition added to or dropped from
 * {@link CampaignTransitions} without this list changing fails the test.
 */
class CampaignTransitionsTest {

    @Test
    void campaignStatusesMoveOnlyAsDeclared() {
        assertThat(allowed(CampaignTransitions.CAMPAIGN, CampaignStatus.class)).containsExactlyInAnyOrder(
                "RUNNING->PAUSED", "RUNNING->SUCCEEDED", "RUNNING->FAILED", "PAUSED->RUNNING", "FAILED->RUNNING");
    }

    @Test
    void clusterStepsGoInOrderFailAnywhereAndResumeWhereTheyFailed() {
        assertThat(allowed(CampaignTransitions.CLUSTER, ClusterStep.class)).containsExactlyInAnyOrder(
                "PENDING->PREFLIGHT", "PREFLIGHT->DRAINING", "DRAINING->UPDATING", "UPDATING->VERIFYING", "VERIFYING->UNDRAINING", "UNDRAINING->DONE",
                "PENDING->FAILED", "PREFLIGHT->FAILED", "DRAINING->FAILED", "UPDATING->FAILED", "VERIFYING->FAILED", "UNDRAINING->FAILED",
                "FAILED->PENDING", "FAILED->DRAINING", "FAILED->UPDATING", "FAILED->UNDRAINING");
        assertThat(CampaignTransitions.resumeStep(ClusterStep.PREFLIGHT)).isEqualTo(ClusterStep.PENDING);
        assertThat(CampaignTransitions.resumeStep(ClusterStep.PENDING)).isEqualTo(ClusterStep.PENDING);
        assertThat(CampaignTransitions.resumeStep(ClusterStep.DRAINING)).isEqualTo(ClusterStep.DRAINING);
        assertThat(CampaignTransitions.resumeStep(ClusterStep.UPDATING)).isEqualTo(ClusterStep.UPDATING);
        assertThat(CampaignTransitions.resumeStep(ClusterStep.VERIFYING)).isEqualTo(ClusterStep.UPDATING);
        assertThat(CampaignTransitions.resumeStep(ClusterStep.UNDRAINING)).isEqualTo(ClusterStep.UNDRAINING);
        // Every step a cluster can fail at resumes to a step the table allows from FAILED.
        for (ClusterStep at : List.of(ClusterStep.PENDING, ClusterStep.PREFLIGHT, ClusterStep.DRAINING, ClusterStep.UPDATING, ClusterStep.VERIFYING,
                ClusterStep.UNDRAINING)) {
            assertThat(CampaignTransitions.CLUSTER.allows(ClusterStep.FAILED, CampaignTransitions.resumeStep(at))).as(at.name()).isTrue();
        }
    }

    @Test
    void machinePhasesMoveOnlyAsDeclared() {
        List<String> expected = new ArrayList<>(List.of(
                "PENDING->CHECKED", "PENDING->BLOCKED", "PENDING->DONE",
                "CHECKED->BLOCKED", "CHECKED->DONE", "CHECKED->WAITING", "CHECKED->DOWNLOADING", "CHECKED->PREPARED", "CHECKED->INSTALLING",
                "CHECKED->RESTARTING",
                "BLOCKED->CHECKED", "BLOCKED->DONE",
                "DONE->CHECKED", "DONE->BLOCKED",
                "FAILED->WAITING"));
        List<String> updating = List.of("WAITING", "DOWNLOADING", "PREPARED", "INSTALLING", "RESTARTING");
        for (String from : updating) {
            for (String to : updating) {
                if (!from.equals(to)) {
                    expected.add(from + "->" + to);
                }
            }
            expected.add(from + "->DONE");
        }
        for (MachinePhase from : MachinePhase.values()) {
            if (from != MachinePhase.FAILED) {
                expected.add(from + "->FAILED");
            }
            if (from != MachinePhase.PENDING) {
                expected.add(from + "->PENDING");
            }
        }
        assertThat(allowed(CampaignTransitions.MACHINE, MachinePhase.class)).containsExactlyInAnyOrderElementsOf(expected);
        // A repeated observation of the same phase is no transition.
        for (MachinePhase phase : MachinePhase.values()) {
            assertThat(CampaignTransitions.MACHINE.allows(phase, phase)).as(phase.name()).isTrue();
        }
    }

    @Test
    void startStatesMoveOnlyAsDeclared() {
        assertThat(allowed(CampaignTransitions.START, StartState.class)).containsExactlyInAnyOrder(
                "NOT_SENT->SENDING", "SENDING->SENT", "SENDING->NOT_SENT", "SENT->NOT_SENT");
    }

    @Test
    void anIllegalTransitionIsRefusedNamingBothStates() {
        assertThatThrownBy(() -> CampaignTransitions.CLUSTER.check(ClusterStep.PREFLIGHT, ClusterStep.UPDATING))
                .isInstanceOf(IllegalTransitionException.class)
                .hasMessage("illegal cluster step transition PREFLIGHT -> UPDATING")
                .satisfies(thrown -> {
                    assertThat(((IllegalTransitionException) thrown).from()).isEqualTo("PREFLIGHT");
                    assertThat(((IllegalTransitionException) thrown).to()).isEqualTo("UPDATING");
                });
        assertThatThrownBy(() -> CampaignTransitions.CAMPAIGN.check(CampaignStatus.SUCCEEDED, CampaignStatus.RUNNING))
                .isInstanceOf(IllegalTransitionException.class).hasMessageContaining("SUCCEEDED -> RUNNING");
        assertThatThrownBy(() -> CampaignTransitions.MACHINE.check(MachinePhase.BLOCKED, MachinePhase.WAITING))
                .isInstanceOf(IllegalTransitionException.class).hasMessageContaining("machine phase").hasMessageContaining("BLOCKED -> WAITING");
        assertThatThrownBy(() -> CampaignTransitions.START.check(StartState.NOT_SENT, StartState.SENT))
                .isInstanceOf(IllegalTransitionException.class).hasMessageContaining("NOT_SENT -> SENT");
    }

    @Test
    void storedValuesKeepTheirWireForm() {
        // The rows of existing databases (migration V7_1) hold these texts.
        assertThat(StartState.NOT_SENT.wire()).isEqualTo("not-sent");
        assertThat(StartState.of("sending")).isEqualTo(StartState.SENDING);
        assertThat(MachinePhase.of("restarting")).isEqualTo(MachinePhase.RESTARTING);
        assertThat(MachinePhase.BLOCKED.wire()).isEqualTo("blocked");
        assertThat(ClusterStep.of("undraining")).isEqualTo(ClusterStep.UNDRAINING);
        assertThat(CampaignStatus.of("paused")).isEqualTo(CampaignStatus.PAUSED);
    }

    private static <S extends Enum<S>> Set<String> allowed(StateTable<S> table, Class<S> states) {
        Set<String> allowed = new TreeSet<>();
        for (S from : states.getEnumConstants()) {
            for (S to : states.getEnumConstants()) {
                if (from != to && table.allows(from, to)) {
                    allowed.add(from + "->" + to);
                }
            }
        }
        return allowed;
    }
}
