package io.macfleet.console.columns;

import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.Status;
import io.macfleet.fleet.StatusColumn;
import io.macfleet.provision.RunView;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Where the machine stands in the newest run that included it. A machine waiting for a person counts as a problem:
 * someone has to go to it, so it belongs at the top of the overview.
 */
@ApplicationScoped
public class ProvisioningColumn implements StatusColumn {

    @Override
    public String name() {
        return "Provisioning";
    }

    @Override
    public int order() {
        return 600;
    }

    @Override
    public Status cell(MachineState machine) {
        if (machine.provisioning().isEmpty()) {
            return Status.none("not provisioned yet", "no provisioning run has included " + machine.name());
        }
        RunView.MachineProgress progress = machine.provisioning().get();
        RunView.Step step = progress.currentStep();
        String run = "run " + progress.runId() + " (" + progress.playbook() + ")";
        String summary = step.summary() == null ? "" : ": " + step.summary().lines().findFirst().orElse("");
        return switch (io.macfleet.provision.MachineState.fromLabel(progress.state())) {
            case READY -> Status.ok("ready", run + " finished every step on " + machine.name());
            case FAILED -> Status.problem("failed: " + step.step(), run + ", step " + step.step() + " failed" + summary);
            case WAITING_FOR_OPERATOR -> Status.problem("waiting for a person: " + step.step(), run + ", step " + step.step()
                    + " needs someone at " + machine.name() + summary);
            case IN_PROGRESS -> Status.warning("in progress: " + step.step(), run + ", at step " + step.step() + " (" + step.status() + ")");
        };
    }
}
