package io.macfleet.provision;

import java.util.Optional;

/**
 * A typed step, made by its {@link StepType} from parameters validated when the playbook was loaded. Every step
 * answers "already done?" ({@link #check}) without changing anything on the machine; steps that can change something
 * say so with {@link #hasAction()} and do it in {@link #act}. A dry run asks {@link #plan}. The run and the dry run
 * call only these methods: they know no step type by name.
 */
public interface StepDefinition {

    /** Whether the step is already satisfied on the machine. Never changes the machine. */
    CheckResult check(MachineContext context);

    /** Makes the step true on the machine; returns a short summary. Throws {@link StepFailedException}. */
    default String act(MachineContext context) {
        throw new StepFailedException("nothing can be done automatically: " + context.machine() + " does not satisfy the check");
    }

    default boolean hasAction() {
        return false;
    }

    /** Whether the check is worth running again after the action to verify it (false for reboots). */
    default boolean verifyAfterAction() {
        return true;
    }

    /**
     * What a dry run says, changing nothing: by default the check, then whether a person, the action or nobody would
     * make it true.
     *
     * @param earlierStepsChange whether an earlier step of this dry run would change the machine
     */
    default StepPlan plan(MachineContext context, boolean earlierStepsChange) {
        CheckResult check = check(context);
        if (check.satisfied()) {
            return StepPlan.alreadyDone(check.detail());
        }
        if (walkthrough().isPresent()) {
            return StepPlan.needsOperator(check.detail());
        }
        return hasAction() ? StepPlan.wouldRun(check.detail()) : StepPlan.wouldFail(check.detail());
    }

    /** Steps a person does: the run walks a person through them instead of calling {@link #act}. */
    default Optional<OperatorWalkthrough> walkthrough() {
        return Optional.empty();
    }

    /**
     * For step types of {@link PlaybookStep.Scope#CLUSTER} scope: the check, run once per cluster when every machine of
     * the cluster in the run got to the step or stopped on the way.
     */
    default CheckResult checkCluster(ClusterMeeting meeting) {
        throw new IllegalStateException("this step acts on each machine, not on a cluster");
    }

    /**
     * For cluster-scope steps with {@link #hasAction()}: makes the step true on the cluster when
     * {@link #checkCluster} failed, once for all its machines; the run then checks again. Returns a short summary;
     * throws {@link StepFailedException}.
     */
    default String actCluster(ClusterMeeting meeting) {
        throw new StepFailedException("nothing can be done automatically for cluster " + meeting.cluster());
    }
}
