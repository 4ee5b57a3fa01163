package io.macfleet.facts;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.macfleet.command.ExitCodes;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code macfleet drift}: the stored facts against the inventory. */
@Command(name = "drift", mixinStandardHelpOptions = true,
        description = "Compare the latest stored facts with the inventory: serial number, memory, model, the cluster's target macOS version.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:no drift", "1:drift (or a machine without facts)", "2:unknown cluster"})
public class DriftCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--cluster", paramLabel = "CLUSTER", description = "Only the machines of this cluster.")
    String cluster;

    @Option(names = "--json", description = "Print as JSON.")
    boolean json;

    @Inject
    FactsService facts;

    @Override
    public Integer call() throws JsonProcessingException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // An unknown cluster (FactsService.UnknownNameException) is reported by the CLI's one failure handler.
        List<Drift.Report> reports = facts.drift(facts.select(cluster, List.of()));
        long drifted = reports.stream().filter(Drift.Report::drifted).count();
        if (json) {
            out.println(FactsStore.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(Map.of("machines", reports, "drifted", drifted)));
        } else {
            for (Drift.Report report : reports) {
                if (!report.drifted()) {
                    out.println(report.machine() + ": matches the inventory (facts of " + report.observedAt() + ")");
                }
                report.differences().forEach(difference -> out.println(difference.message()));
            }
            out.println(drifted == 0 ? "No drift: " + reports.size() + " machine(s) match the inventory."
                    : "Drift: " + drifted + " of " + reports.size() + " machine(s) differ from the inventory.");
        }
        out.flush();
        return drifted == 0 ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
    }
}
