package io.macfleet.console.columns;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.Finding;
import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.Status;
import io.macfleet.fleet.StatusColumn;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** The findings of the cluster's cabling check that concern this machine. */
@ApplicationScoped
public class CablingColumn implements StatusColumn {

    @Override
    public String name() {
        return "Cabling";
    }

    @Override
    public int order() {
        return 400;
    }

    @Override
    public Status cell(MachineState machine) {
        if (machine.cabling().isEmpty()) {
            return Status.none("no cluster", "not in a cluster, so not checked");
        }
        CablingReport report = machine.cabling().get();
        List<Finding> own = report.findings().stream().filter(finding -> finding.machines().contains(machine.name())).toList();
        List<Finding> errors = own.stream().filter(finding -> finding.severity() == Finding.Severity.ERROR).toList();
        if (!errors.isEmpty()) {
            return Status.problem(codes(errors), errors.stream().map(Finding::message).collect(Collectors.joining(" ")));
        }
        if (!own.isEmpty()) {
            return Status.warning(codes(own), own.stream().map(Finding::message).collect(Collectors.joining(" ")));
        }
        if (!report.passed()) {
            return Status.warning("cluster fails", "this machine's cables are fine; the cluster's are not: " + report.verdict());
        }
        return Status.ok("passed", report.verdict());
    }

    private static String codes(List<Finding> findings) {
        return findings.stream().map(finding -> finding.code().name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .distinct().collect(Collectors.joining(", "));
    }
}
