package io.macfleet.console;

import io.macfleet.provision.OperatorRequest;
import io.macfleet.provision.RunView;
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
        return switch (status) {
            case "succeeded" -> "ok";
            case "failed" -> "bad";
            case "waiting-for-operator", "interrupted" -> "warn";
            default -> "none";
        };
    }

    private static String stepCss(String status) {
        return switch (status) {
            case "done", "skipped-already-done", "skipped-not-applicable", "ready" -> "ok";
            case "failed" -> "bad";
            case "waiting-for-operator", "running", "in-progress" -> "warn";
            default -> "none";
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
            String state = states.getOrDefault(machine, "in-progress");
            machines.add(new Pages.RunMachine(machine, state, stepCss(state), cells));
        }
        List<Pages.OperatorTask> waiting = new ArrayList<>();
        for (RunView.Step step : detail.steps()) {
            if (!step.status().equals("waiting-for-operator")) {
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
        boolean live = !run.status().equals("succeeded") && !run.status().equals("failed");
        return new Pages.RunProgress(summary(run), "/console/runs/" + run.id() + "/progress", live, stepNames, machines, waiting, confirmations, viewer);
    }
}
