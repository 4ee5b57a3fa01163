package io.macfleet.provision;

import io.macfleet.cabling.CablingCheck;
import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.Finding;
import io.macfleet.cabling.MachineCablingFacts;
import io.macfleet.cabling.PlannedTopology;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code type: cabling} (cluster scope): once every machine of the cluster in the run got here (or failed on the
 * way), gathers fresh facts of those that got here and runs the cabling check of the cluster. Machines that did
 * not get here are checked from their latest stored facts, and named.
 */
final class CablingStep implements StepDefinition {

    /** The step type {@code cabling}. */
    @jakarta.inject.Singleton
    static final class Type extends SimpleStepType<Parameters> {
        Type() {
            super("cabling", Parameters.class, (parameters, files) -> new CablingStep(parameters));
        }

        @Override
        public PlaybookStep.Scope scope() {
            return PlaybookStep.Scope.CLUSTER;
        }
    }

    record Parameters(Boolean allowWarnings) {
        Parameters {
            allowWarnings = allowWarnings == null || allowWarnings;
        }
    }

    private final Parameters parameters;

    CablingStep(Parameters parameters) {
        this.parameters = parameters;
    }

    @Override
    public CheckResult check(MachineContext context) {
        throw new IllegalStateException("the cabling step is checked per cluster");
    }

    @Override
    public CheckResult checkCluster(ClusterMeeting meeting) {
        return checkCluster(meeting.cluster(), meeting.arrived(), meeting.missing(), meeting.cabling(), meeting.facts());
    }

    CheckResult checkCluster(String cluster, List<MachineContext> arrived, List<String> missing, ClusterCabling cabling, FactsService facts) {
        PlannedTopology plan = cabling.plan(cluster);
        List<MachineCablingFacts> observed = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        List<String> gathered = new ArrayList<>();
        for (MachineContext context : arrived) {
            try {
                FactsObservation observation = context.gatherObservation();
                observed.add(ClusterCabling.cablingFacts(observation, (String) context.entry().get("address")));
                gathered.add(context.machine());
            } catch (StepFailedException e) {
                problems.add(e.getMessage());
            }
        }
        Map<String, FactsObservation> stored = facts.latest(plan.machines());
        for (String machine : plan.machines()) {
            if (!gathered.contains(machine) && stored.containsKey(machine)) {
                observed.add(ClusterCabling.cablingFacts(stored.get(machine), (String) facts.machine(machine).map(m -> m.get("address")).orElse(null)));
            }
        }
        String target = (String) facts.cluster(cluster).map(c -> c.get("macosVersion")).orElse(null);
        CablingReport report = CablingCheck.check(plan, observed, Optional.ofNullable(target));
        String missingNote = missing.isEmpty() ? "" : "; did not reach this step: " + String.join(", ", missing) + " (checked from stored facts)";
        List<String> errors = report.findings().stream().filter(f -> f.severity() == Finding.Severity.ERROR
                || (!parameters.allowWarnings() && f.severity() == Finding.Severity.WARNING)).map(f -> f.message() + " Fix: " + f.fix()).toList();
        if (!problems.isEmpty() || !errors.isEmpty()) {
            List<String> all = new ArrayList<>(problems);
            all.addAll(errors);
            return CheckResult.notSatisfied("cabling check of " + cluster + " failed: " + String.join(" | ", all) + missingNote);
        }
        return CheckResult.satisfied("cabling check of " + cluster + " passed: " + report.verdict() + missingNote);
    }
}
