package io.macfleet.console.columns;

import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.Status;
import io.macfleet.fleet.StatusColumn;
import io.macfleet.facts.MachineFacts;
import jakarta.enterprise.context.ApplicationScoped;

/** Whether RDMA over Thunderbolt is enabled (it can only be enabled in macOS Recovery). */
@ApplicationScoped
public class RdmaColumn implements StatusColumn {

    @Override
    public String name() {
        return "RDMA";
    }

    @Override
    public int order() {
        return 300;
    }

    @Override
    public Status cell(MachineState machine) {
        if (machine.observation().isEmpty()) {
            return Status.none("unknown", "no facts yet");
        }
        MachineFacts facts = machine.observation().get().facts();
        if (facts.rdmaEnabled()) {
            return Status.ok("enabled", "rdma_ctl status: enabled; devices " + String.join(", ", facts.rdmaDevices()));
        }
        return Status.problem("disabled", "rdma_ctl status: disabled. Enable it in macOS Recovery: `rdma_ctl enable`, then restart");
    }
}
