package io.macfleet.console.columns;

import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.Status;
import io.macfleet.fleet.StatusColumn;
import io.macfleet.facts.Drift;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.stream.Collectors;

/** What the inventory states (serial number, memory, model) against the facts; macOS has its own column. */
@ApplicationScoped
public class DriftColumn implements StatusColumn {

    @Override
    public String name() {
        return "Drift";
    }

    @Override
    public int order() {
        return 500;
    }

    @Override
    public Status cell(MachineState machine) {
        if (machine.observation().isEmpty()) {
            return Status.none("unknown", "no facts yet");
        }
        List<Drift.Difference> differences = machine.drift().differences().stream()
                .filter(difference -> !difference.field().equals("macosVersion")).toList();
        if (differences.isEmpty()) {
            return Status.ok("matches", "serial number, memory and model match the inventory (where it states them)");
        }
        return Status.problem(differences.stream().map(Drift.Difference::field).collect(Collectors.joining(", ")),
                differences.stream().map(Drift.Difference::message).collect(Collectors.joining(" ")));
    }
}
