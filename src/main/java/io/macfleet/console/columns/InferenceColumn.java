package io.macfleet.console.columns;

import io.macfleet.console.MachineState;
import io.macfleet.console.Status;
import io.macfleet.console.StatusColumn;
import jakarta.enterprise.context.ApplicationScoped;

/** The inference node on the machine. Until macfleet deploys it, there is nothing to report. */
@ApplicationScoped
public class InferenceColumn implements StatusColumn {

    @Override
    public String name() {
        return "Inference";
    }

    @Override
    public String title() {
        return "Inference node";
    }

    @Override
    public int order() {
        return 700;
    }

    @Override
    public Status cell(MachineState machine) {
        return Status.none("not deployed", "macfleet has not deployed the inference node to " + machine.name());
    }
}
