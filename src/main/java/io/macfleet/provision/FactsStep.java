package io.macfleet.provision;

import io.macfleet.facts.Drift;
import io.macfleet.facts.MachineFacts;
import java.util.List;

/**
 * {@code type: facts}: gathers the machine's facts over SSH (stored, except in a dry run) and compares them with
 * the inventory. Differences in the fields of {@code failOn} fail the step; others are reported only.
 */
final class FactsStep implements StepDefinition {

    /** The step type {@code facts}. */
    @jakarta.inject.Singleton
    static final class Type extends SimpleStepType<Parameters> {
        Type() {
            super("facts", Parameters.class, (parameters, files) -> new FactsStep(parameters));
        }
    }

    static final List<String> FIELDS = List.of("serialNumber", "memoryGb", "model", "macosVersion");

    record Parameters(List<String> failOn) {
        Parameters {
            failOn = failOn == null ? FIELDS : List.copyOf(failOn);
            for (String field : failOn) {
                if (!FIELDS.contains(field)) {
                    throw new IllegalArgumentException("failOn: unknown field '" + field + "'; expected some of " + FIELDS);
                }
            }
        }
    }

    private final Parameters parameters;

    FactsStep(Parameters parameters) {
        this.parameters = parameters;
    }

    @Override
    public CheckResult check(MachineContext context) {
        MachineFacts facts = context.gatherFacts();
        String target = context.cluster() == null ? null : context.cluster().macosVersion();
        Drift.Report report = Drift.compare(context.entry(), target, facts);
        List<Drift.Difference> failing = report.differences().stream().filter(d -> parameters.failOn().contains(d.field())).toList();
        List<Drift.Difference> reported = report.differences().stream().filter(d -> !parameters.failOn().contains(d.field())).toList();
        String seen = facts.modelIdentifier() + ", " + facts.memoryGigabytes() + " GB, serial " + facts.serialNumber() + ", macOS "
                + facts.macosVersion() + (reported.isEmpty() ? "" : "; noted: "
                + String.join("; ", reported.stream().map(Drift.Difference::message).toList()));
        if (!failing.isEmpty()) {
            return CheckResult.notSatisfied("drift against the inventory: " + String.join("; ", failing.stream().map(Drift.Difference::message).toList()));
        }
        return CheckResult.satisfied("facts gathered: " + seen);
    }
}
