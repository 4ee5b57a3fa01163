package io.macfleet.provision;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * How a run ended in this process.
 *
 * @param status a {@link RunState} label: succeeded, failed, waiting-for-operator, or running when it was stopped (lease lost, interrupted)
 * @param machines per machine, a {@link MachineState} label: ready, failed, waiting-for-operator, in-progress
 * @param messages per machine: the failure, or what a person must do, or the last step's summary
 * @param waiting the operator steps left waiting (non-interactive, or deferred)
 */
public record RunOutcome(long runId, boolean resumed, String status, Map<String, String> machines, Map<String, String> messages,
                         List<OperatorRequest> waiting, Duration elapsed) {

    public boolean allReady() {
        return machines.values().stream().allMatch(MachineState.READY.label()::equals);
    }

    public boolean anyFailed() {
        return machines.values().stream().anyMatch(MachineState.FAILED.label()::equals);
    }
}
