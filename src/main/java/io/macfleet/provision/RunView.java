package io.macfleet.provision;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Read models of stored runs, as the CLI, the REST API and the console show them. */
public final class RunView {

    private RunView() {
    }

    /**
     * One run.
     *
     * @param status running, waiting-for-operator, succeeded, failed; interrupted where a run stored as running has no live
 *        process working on it (shown so by {@link ProvisioningService}; resuming it continues it)
     * @param leaseOwner the process working on it ({@code pid@host/uuid}), null when none
     * @param counts how many (machine, step) pairs are in each step status
     */
    public record Run(long id, String playbook, String playbookHash, String cluster, List<String> machines, Map<String, Object> options,
                      String status, String startedBy, Instant createdAt, Instant updatedAt, Instant finishedAt,
                      String leaseOwner, Instant leaseHeartbeat, Map<String, Integer> counts) {

        Run withStatus(String shownStatus) {
            return new Run(id, playbook, playbookHash, cluster, machines, options, shownStatus, startedBy, createdAt, updatedAt,
                    finishedAt, leaseOwner, leaseHeartbeat, counts);
        }
    }

    /**
     * One step on one machine.
     *
     * @param operatorRequest the walkthrough a person follows, while the step waits for one; null otherwise
     */
    public record Step(String machine, String step, int position, String status, int attempts, Instant startedAt,
                       Instant finishedAt, String summary, OperatorRequest operatorRequest) {
    }

    /**
     * Where one machine stands in the newest run that included it.
     *
     * @param state ready, failed, waiting-for-operator or in-progress
     * @param steps the machine's steps in that run, in playbook order
     */
    public record MachineProgress(String machine, long runId, String playbook, String state, List<Step> steps, Instant updatedAt) {

        /** The step that decides the state: the failed or waiting one, else the first not complete, else the last. */
        public Step currentStep() {
            for (Step step : steps) {
                StepStatus status = StepStatus.fromLabel(step.status());
                if (status == StepStatus.FAILED || status == StepStatus.WAITING_FOR_OPERATOR) {
                    return step;
                }
            }
            return steps.stream().filter(step -> !StepStatus.fromLabel(step.status()).complete()).findFirst().orElse(steps.getLast());
        }
    }

    /** Who confirmed an operator step and what the verification said then. */
    public record Confirmation(String machine, String step, String actor, Instant confirmedAt, boolean verified, String detail) {
    }

    /** A run with every step of every machine, in machine then playbook order, and its confirmations. */
    public record Detail(Run run, List<Step> steps, List<Confirmation> confirmations) {

        /** Per machine: ready, failed, waiting-for-operator or in progress. */
        public Map<String, String> machineStates() {
            Map<String, String> states = new java.util.LinkedHashMap<>();
            for (String machine : run.machines()) {
                List<Step> mine = steps.stream().filter(step -> step.machine().equals(machine)).toList();
                states.put(machine, machineState(mine));
            }
            return states;
        }

        static String machineState(List<Step> steps) {
            return storedMachineState(steps).label();
        }

        /** What the stored steps of one machine amount to. */
        static MachineState storedMachineState(List<Step> steps) {
            if (steps.stream().anyMatch(step -> step.status().equals(StepStatus.FAILED.label()))) {
                return MachineState.FAILED;
            }
            if (steps.stream().anyMatch(step -> step.status().equals(StepStatus.WAITING_FOR_OPERATOR.label()))) {
                return MachineState.WAITING_FOR_OPERATOR;
            }
            if (steps.stream().allMatch(step -> StepStatus.fromLabel(step.status()).complete())) {
                return MachineState.READY;
            }
            return MachineState.IN_PROGRESS;
        }
    }
}
