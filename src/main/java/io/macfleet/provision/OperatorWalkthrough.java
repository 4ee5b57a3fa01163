package io.macfleet.provision;

/**
 * A step that a person does at the machine: when its check fails, the run asks a person (machine by machine, on the
 * console prompt or in the web console), then verifies with fresh connections until the verification passes or the
 * wait times out. A step type offers this through {@link StepDefinition#walkthrough()}.
 */
public interface OperatorWalkthrough {

    /** What to ask of the person for this machine, and why (what the check found wrong). */
    OperatorRequest request(long runId, String step, MachineContext context, String whatIsWrong);

    /** Whether anything can be verified over SSH; without, a person's confirmation is the verification. */
    boolean verifiable();

    /** The verification (fresh connections while the machine may be restarting); an unreachable machine is not verified. */
    CheckResult verify(MachineContext context, boolean freshConnection);

    /** Whether a failed verification means the machine did not answer (keep waiting) rather than answered wrong. */
    boolean unreachable(CheckResult verification);

    /** How long to keep verifying after the person said done, and how often. */
    int timeoutSeconds();

    int pollSeconds();
}
