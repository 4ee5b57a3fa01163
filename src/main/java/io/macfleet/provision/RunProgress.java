package io.macfleet.provision;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Where every machine of one execution of a run stands (machines work on their own threads), and what the run comes to.
 * Every change of a machine's state goes through {@link MachineState}'s table.
 */
final class RunProgress {

    private final Map<String, MachineState> states = new ConcurrentHashMap<>();
    private final Map<String, String> messages = new ConcurrentHashMap<>();
    private final List<OperatorRequest> waiting = Collections.synchronizedList(new ArrayList<>());

    /** The machine moves to {@code next}; {@code message} (the failure, what a person must do, the last summary) unless null. */
    void move(String machine, MachineState next, String message) {
        states.compute(machine, (name, current) -> (current == null ? MachineState.IN_PROGRESS : current).to(name, next));
        if (message != null) {
            messages.put(machine, message);
        }
    }

    MachineState state(String machine) {
        return states.getOrDefault(machine, MachineState.IN_PROGRESS);
    }

    void waitingFor(OperatorRequest request) {
        waiting.add(request);
    }

    List<OperatorRequest> waiting() {
        return List.copyOf(waiting);
    }

    /** What the run comes to when every machine stopped; still running when this process lost the run's lease. */
    RunState result(boolean leaseLost) {
        if (leaseLost) {
            return RunState.RUNNING;
        }
        if (states.containsValue(MachineState.FAILED)) {
            return RunState.FAILED;
        }
        if (states.containsValue(MachineState.WAITING_FOR_OPERATOR)) {
            return RunState.WAITING_FOR_OPERATOR;
        }
        return states.values().stream().allMatch(MachineState.READY::equals) ? RunState.SUCCEEDED : RunState.RUNNING;
    }

    /** Per machine, in the order given: its state's label (the JSON and CLI edge). */
    Map<String, String> labels(List<String> machines) {
        Map<String, String> ordered = new LinkedHashMap<>();
        machines.forEach(machine -> ordered.put(machine, state(machine).label()));
        return ordered;
    }

    Map<String, String> messages(List<String> machines) {
        Map<String, String> ordered = new LinkedHashMap<>();
        machines.forEach(machine -> ordered.put(machine, messages.getOrDefault(machine, "")));
        return ordered;
    }

    /** As the audit line says it: {@code {studio-01=ready, studio-02=failed}}. */
    @Override
    public String toString() {
        return states.entrySet().stream().map(entry -> entry.getKey() + "=" + entry.getValue().label()).collect(Collectors.joining(", ", "{", "}"));
    }
}
