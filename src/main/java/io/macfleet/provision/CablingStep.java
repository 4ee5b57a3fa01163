package io.macfleet.provision;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.Finding;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
        Map<String, FactsObservation> fresh = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (MachineContext context : arrived) {
            try {
                fresh.put(context.machine(), context.gatherObservation());
            } catch (StepFailedException e) {
                problems.add(e.getMessage());
            }
        }
        CablingReport report = cabling.cluster(cluster, fresh).check();
        String missingNote = missing.isEmpty() ? "" : "; did not reach this step: " + String.join(", ", missing) + " (checked from stored facts)";
        // A macOS version other than the cluster's target is no cabling fault and nothing provisioning can fix: an OS-update
        // campaign does (and needs the cluster provisioned first, RDMA on). It is named, but does not fail the step.
        List<String> versionNotes = report.findings().stream().filter(Finding::fixedByOsUpdate)
                .map(f -> f.message() + " (macfleet os-update apply " + cluster + " updates them)").distinct().toList();
        List<String> errors = report.findings().stream().filter(f -> !f.fixedByOsUpdate())
                .filter(f -> f.severity() == Finding.Severity.ERROR || (!parameters.allowWarnings() && f.severity() == Finding.Severity.WARNING))
                .map(f -> f.message() + " Fix: " + f.fix()).toList();
        if (!problems.isEmpty() || !errors.isEmpty()) {
            List<String> all = new ArrayList<>(problems);
            all.addAll(errors);
            return CheckResult.notSatisfied("cabling check of " + cluster + " failed: " + String.join(" | ", all) + missingNote);
        }
        if (!versionNotes.isEmpty()) {
            // The report's verdict counts the version finding as an error ("fix the errors above"); say what passed instead.
            return CheckResult.satisfied("cabling check of " + cluster + " passed (cables, RDMA and bridge as tensor parallelism needs); not ready yet: "
                    + String.join("; ", versionNotes) + missingNote);
        }
        return CheckResult.satisfied("cabling check of " + cluster + " passed: " + report.verdict() + missingNote);
    }
}
