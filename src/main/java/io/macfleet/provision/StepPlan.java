package io.macfleet.provision;

/**
 * What a dry run says about one step on one machine.
 *
 * @param verdict already-done, would-run, needs-operator or would-fail (the service adds not-applicable,
 *                runs-after-all and unknown)
 * @param changes whether the step would change the machine (later steps such as a reboot depend on it)
 */
public record StepPlan(String verdict, String detail, boolean changes) {

    public static StepPlan alreadyDone(String detail) {
        return new StepPlan("already-done", detail, false);
    }

    public static StepPlan wouldRun(String detail) {
        return new StepPlan("would-run", detail, true);
    }

    public static StepPlan needsOperator(String detail) {
        return new StepPlan("needs-operator", detail, true);
    }

    public static StepPlan wouldFail(String detail) {
        return new StepPlan("would-fail", detail, false);
    }
}
