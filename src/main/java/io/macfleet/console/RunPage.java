package io.macfleet.console;

import io.macfleet.provision.MachineState;
import io.macfleet.provision.OperatorRequest;
import io.macfleet.provision.RunState;
import io.macfleet.provision.RunView;
import io.macfleet.provision.StepStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The provisioning runs' page models: pure functions of what the provisioning store answered. */
final class RunPage {

    private RunPage() {
    }

    static Pages.RunSummary summary(RunView.Run run) {
        return new Pages.RunSummary(String.valueOf(run.id()), run.playbook(), run.status(), runCss(run.status()), Ages.utc(run.createdAt()),
                run.cluster() == null ? String.join(", ", run.machines()) : run.cluster() + ": " + String.join(", ", run.machines()), run.startedBy());
    }

    private static String runCss(String status) {
        return switch (RunState.fromLabel(status)) {
            case SUCCEEDED -> "ok";
            case FAILED -> "bad";
            case WAITING_FOR_OPERATOR, INTERRUPTED -> "warn";
            case RUNNING -> "none";
        };
    }

    private static String stepCss(String status) {
        return switch (StepStatus.fromLabel(status)) {
            case DONE, SKIPPED_ALREADY_DONE, SKIPPED_NOT_APPLICABLE -> "ok";
            case FAILED -> "bad";
            case WAITING_FOR_OPERATOR, RUNNING -> "warn";
            case PENDING -> "none";
        };
    }

    private static String machineCss(String state) {
        return switch (MachineState.fromLabel(state)) {
            case READY -> "ok";
            case FAILED -> "bad";
            case WAITING_FOR_OPERATOR, IN_PROGRESS -> "warn";
        };
    }

    /** A run's live part: every machine's steps, the tasks waiting for a person, the confirmations so far. */
    static Pages.RunProgress progress(RunView.Detail detail, Viewer viewer) {
        RunView.Run run = detail.run();
        List<String> stepNames = detail.steps().stream().map(RunView.Step::step).distinct().toList();
        Map<String, String> states = detail.machineStates();
        List<Pages.RunMachine> machines = new ArrayList<>();
        for (String machine : run.machines()) {
            List<Pages.StepCell> cells = detail.steps().stream().filter(step -> step.machine().equals(machine))
                    .map(step -> new Pages.StepCell(step.step(), step.status(), stepCss(step.status()),
                            step.summary() == null ? "" : step.summary(), step.attempts())).toList();
            String state = states.getOrDefault(machine, MachineState.IN_PROGRESS.label());
            machines.add(new Pages.RunMachine(machine, state, machineCss(state), cells));
        }
        List<Pages.OperatorTask> waiting = new ArrayList<>();
        for (RunView.Step step : detail.steps()) {
            if (StepStatus.fromLabel(step.status()) != StepStatus.WAITING_FOR_OPERATOR) {
                continue;
            }
            Optional<RunView.Confirmation> last = detail.confirmations().stream()
                    .filter(confirmation -> confirmation.machine().equals(step.machine()) && confirmation.step().equals(step.step()))
                    .reduce((first, second) -> second);
            String lastText = last.map(confirmation -> (confirmation.verified() ? "Verified" : "Not verified yet")
                    + " after " + confirmation.actor() + " confirmed at " + Ages.utc(confirmation.confirmedAt()) + ": " + confirmation.detail()).orElse(null);
            OperatorRequest request = step.operatorRequest();
            if (request != null) {
                waiting.add(new Pages.OperatorTask(step.machine(), step.step(), request.title(), request.instructions(), request.expect(),
                        request.whyNeeded(), request.expectedWait(), lastText, last.map(RunView.Confirmation::verified).orElse(false), request.details()));
            } else {
                // Stored before walkthroughs were kept as such: the summary holds the same walkthrough as text.
                waiting.add(new Pages.OperatorTask(step.machine(), step.step(), "Waiting for a person at " + step.machine(),
                        step.summary() == null ? List.of() : step.summary().lines().skip(1).map(String::strip).toList(), "", null, "a few minutes",
                        lastText, last.map(RunView.Confirmation::verified).orElse(false)));
            }
        }
        List<Pages.ConfirmationView> confirmations = detail.confirmations().reversed().stream()
                .map(confirmation -> new Pages.ConfirmationView(confirmation.machine(), confirmation.step(), confirmation.actor(),
                        Ages.utc(confirmation.confirmedAt()), confirmation.verified(), confirmation.detail() == null ? "" : confirmation.detail())).toList();
        boolean live = !RunState.fromLabel(run.status()).finished();
        return new Pages.RunProgress(summary(run), "/console/runs/" + run.id() + "/progress", live, stepNames, machines, waiting, confirmations, viewer);
    }
}
