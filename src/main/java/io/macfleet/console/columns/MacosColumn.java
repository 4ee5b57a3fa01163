package io.macfleet.console.columns;

import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.Status;
import io.macfleet.fleet.StatusColumn;
import io.macfleet.facts.Drift;
import io.macfleet.facts.MachineFacts;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;

/** The macOS version the machine runs, against the version its cluster targets. */
@ApplicationScoped
public class MacosColumn implements StatusColumn {

    @Override
    public String name() {
        return "macOS";
    }

    @Override
    public int order() {
        return 200;
    }

    @Override
    public Status cell(MachineState machine) {
        String target = machine.targetMacos().orElse(null);
        if (machine.observation().isEmpty()) {
            return Status.none("unknown", target == null ? "no facts yet" : "no facts yet; the cluster targets " + target);
        }
        MachineFacts facts = machine.observation().get().facts();
        String version = facts.macosVersion();
        Optional<Drift.Difference> behind = machine.drift().differences().stream()
                .filter(difference -> difference.field().equals("macosVersion")).findFirst();
        if (behind.isPresent()) {
            return Status.problem(version + " \u2260 " + target, behind.get().message());
        }
        if (target == null) {
            return Status.none(version, "macOS " + version + " (" + facts.macosBuild() + "); not in a cluster, so no target");
        }
        return Status.ok(version, "macOS " + version + " (" + facts.macosBuild() + "), the cluster targets " + target);
    }
}
