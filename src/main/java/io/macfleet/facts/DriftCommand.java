package io.macfleet.facts;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.core.JsonProcessingException;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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

    @Mixin
    JsonOption json;

    @Inject
    FactsService facts;

    @Override
    public Integer call() throws JsonProcessingException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // An unknown cluster (FactsService.UnknownNameException) is reported by the CLI's one failure handler.
        List<Drift.Report> reports = facts.drift(facts.select(cluster, List.of()));
        // A machine without facts is unknown, not drifted: "4 of 4 differ" about Macs never gathered would be false.
        long unknown = reports.stream().filter(report -> report.observedAt() == null).count();
        long drifted = reports.stream().filter(report -> report.observedAt() != null && report.drifted()).count();
        if (json.on()) {
            out.println(FactsStore.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(Map.of("machines", reports, "drifted", drifted, "unknown", unknown)));
        } else {
            for (Drift.Report report : reports) {
                if (!report.drifted()) {
                    out.println(report.machine() + ": matches the inventory (facts of " + report.observedAt() + ")");
                }
                report.differences().forEach(difference -> out.println(difference.message()));
            }
            long known = reports.size() - unknown;
            String unknownNote = unknown == 0 ? "" : "; " + unknown + " unknown: no facts yet (run macfleet facts)";
            out.println(known == 0 ? "Drift unknown: no facts yet for any of the " + reports.size() + " machine(s) (run macfleet facts)."
                    : drifted == 0 ? "No drift: " + known + " machine(s) match the inventory" + unknownNote + "."
                    : "Drift: " + drifted + " of " + known + " machine(s)" + (unknown == 0 ? "" : " with facts") + " differ from the inventory"
                    + unknownNote + ".");
        }
        out.flush();
        if (drifted > 0 || unknown > 0) {
            throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
        }
        return ExitCodes.OK;
    }
}
