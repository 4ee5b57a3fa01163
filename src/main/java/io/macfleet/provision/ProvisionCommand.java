package io.macfleet.provision;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.command.ActorOption;
import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.ssh.SshOptions;
import io.macfleet.ssh.SshSettings;
import jakarta.inject.Inject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet provision}: run a playbook on a cluster or machines; {@code runs}, {@code show}, {@code validate}. */
@Command(name = "provision", mixinStandardHelpOptions = true,
        description = {"Take machines of the applied inventory through a playbook (default: provision): every step is checked first and done only"
                + " when needed; state is kept in the database, so a stopped run continues where it stopped when run again for the same target.",
                "Steps that need a person (macOS Recovery) are walked through on the console, machine by machine."},
        subcommands = {ProvisionCommand.Runs.class, ProvisionCommand.Show.class, ProvisionCommand.Validate.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every machine is ready", "1:a machine failed (or the run is held by another live process)",
                "2:usage error (unknown cluster, machine, playbook or step; invalid playbook)",
                "3:stopped at a step that needs a person (--non-interactive, or answered 'later')"})
public class ProvisionCommand implements Callable<Integer> {

    // Made on first use, not when picocli instantiates the command to print help or run another command.
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper().findAndRegisterModules().disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .enable(SerializationFeature.INDENT_OUTPUT);
    }

    @Spec
    CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "CLUSTER", description = "The cluster to provision.")
    String cluster;

    @Option(names = "--machine", paramLabel = "M", description = "A machine to provision (repeatable; with CLUSTER: a subset of it).")
    List<String> machines = new ArrayList<>();

    @Option(names = "--playbook", paramLabel = "NAME|FILE", defaultValue = "provision", description = "Playbook name or file (default ${DEFAULT-VALUE}).")
    String playbook;

    @Option(names = "--only", paramLabel = "STEP", description = "Run only this step.")
    String only;

    @Option(names = "--from", paramLabel = "STEP", description = "Start at this step.")
    String from;

    @Option(names = "--dry-run", description = "Show what would run where and which steps are already done; change nothing.")
    boolean dryRun;

    @Option(names = "--non-interactive", description = "Do not ask: stop at steps that need a person (exit 3), leaving them waiting-for-operator.")
    boolean nonInteractive;

    @Option(names = "--new-run", description = "Start a new run even if an unfinished run of the same target exists.")
    boolean newRun;

    @Mixin
    ActorOption actor;

    @Mixin
    SshOptions ssh;

    @Option(names = "--serial", paramLabel = "N", defaultValue = "0",
            description = "Rolling run: N machines at a time through the whole playbook, batch after batch (default: all at once).")
    int serial;

    @Option(names = "--max-fail-percent", paramLabel = "P", defaultValue = "100",
            description = "With --serial: stop before the next batch when more than P percent of a batch failed (default ${DEFAULT-VALUE}: never).")
    int maxFailPercent;

    @Mixin
    JsonOption json;

    @Inject
    ProvisioningService service;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        SshSettings settings;
        try {
            settings = ssh.settings(Actors.commandLine());
        } catch (IllegalArgumentException e) {
            throw CommandException.usage(e.getMessage());
        }
        ProvisioningService.Options options;
        try {
            options = new ProvisioningService.Options(settings.parallelism(), settings.acceptNewHostKeys(), settings.limits().connectTimeout(),
                    settings.limits().commandTimeout(), ProvisioningService.Options.DEFAULTS.leaseTimeout(), serial, maxFailPercent);
        } catch (IllegalArgumentException e) {
            throw CommandException.usage(e.getMessage());
        }
        ProvisioningService.Request request = new ProvisioningService.Request(cluster, machines, playbook, only, from, newRun, options);
        String who = actor.name();
        try {
            if (dryRun) {
                ProvisioningService.Plan plan = service.plan(request);
                if (json.on()) {
                    out.println(Json.MAPPER.writeValueAsString(plan));
                } else {
                    printPlan(out, plan);
                }
                out.flush();
                return ExitCodes.OK;
            }
            boolean live = ConsoleListener.liveTerminal();
            ConsoleListener listener = new ConsoleListener(out, new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)),
                    live, !nonInteractive, who);
            RunOutcome outcome;
            try {
                outcome = service.start(request, who, listener);
            } finally {
                listener.finish();
            }
            printSummary(out, outcome, !nonInteractive);
            service.run(outcome.runId()).ifPresent(detail -> printRecap(out, detail));
            out.flush();
            // The summary and the recap printed above say why.
            failure(outcome).ifPresent(kind -> {
                throw CommandException.reported(kind);
            });
            return ExitCodes.OK;
        } catch (PlaybookLoader.InvalidPlaybookException e) {
            throw CommandException.usage("invalid playbook:\n" + e.getMessage());
        } catch (IllegalArgumentException e) {
            // Invalid requests, a busy run and database failures are reported by the CLI's one failure handler.
            throw CommandException.usage(e.getMessage());
        }
    }

    /** How a run that ended this way failed, if it did: a machine failed, waits for a person, or is not ready. */
    static Optional<CommandFailure.Kind> failure(RunOutcome outcome) {
        if (outcome.anyFailed()) {
            return Optional.of(CommandFailure.Kind.CHECK_FAILED);
        }
        if (outcome.machines().containsValue(MachineState.WAITING_FOR_OPERATOR.label())) {
            return Optional.of(CommandFailure.Kind.NEEDS_OPERATOR);
        }
        return outcome.allReady() ? Optional.empty() : Optional.of(CommandFailure.Kind.CHECK_FAILED);
    }

    /** The exit code of a run that ended this way. */
    static int exitCode(RunOutcome outcome) {
        return failure(outcome).map(CommandFailure.Kind::exitCode).orElse(ExitCodes.OK);
    }

    static void printPlan(PrintWriter out, ProvisioningService.Plan plan) {
        out.println("Dry run of playbook " + plan.playbook() + " (" + plan.source() + "); nothing is changed."
                + (plan.wouldResumeRun() == null ? " A new run would start." : " Run " + plan.wouldResumeRun() + " would be resumed."));
        for (ProvisioningService.PlannedMachine machine : plan.machines()) {
            out.println(machine.machine() + ":");
            for (ProvisioningService.PlannedStep step : machine.steps()) {
                out.printf(Locale.ROOT, "  %-26s %-9s %-15s %s%n", step.step(), step.type(), step.verdict(), abbreviate(step.detail()));
            }
        }
    }

    /**
     * Steps per machine by outcome, like Ansible's PLAY RECAP: ok (already as wanted), changed (the step acted), skipped
     * (not applicable), failed, waiting for a person. Steps not reached (pending) are not counted.
     */
    public static void printRecap(PrintWriter out, RunView.Detail detail) {
        out.println();
        out.println("Recap of run " + detail.run().id() + ":");
        out.printf(Locale.ROOT, "  %-14s %4s %8s %8s %7s %20s%n", "machine", "ok", "changed", "skipped", "failed", "waiting-for-a-person");
        for (String machine : detail.run().machines()) {
            Map<StepStatus, Long> counts = detail.steps().stream().filter(step -> step.machine().equals(machine))
                    .collect(java.util.stream.Collectors.groupingBy(step -> StepStatus.fromLabel(step.status()), java.util.stream.Collectors.counting()));
            out.printf(Locale.ROOT, "  %-14s %4d %8d %8d %7d %20d%n", machine, counts.getOrDefault(StepStatus.SKIPPED_ALREADY_DONE, 0L),
                    counts.getOrDefault(StepStatus.DONE, 0L), counts.getOrDefault(StepStatus.SKIPPED_NOT_APPLICABLE, 0L),
                    counts.getOrDefault(StepStatus.FAILED, 0L), counts.getOrDefault(StepStatus.WAITING_FOR_OPERATOR, 0L));
        }
    }

    /** "8 done, 1 waiting-for-operator" from a run's step counts, in status order. */
    static String describeCounts(Map<String, Integer> counts) {
        List<String> parts = new java.util.ArrayList<>();
        for (StepStatus status : StepStatus.values()) {
            Integer count = counts.get(status.label());
            if (count != null && count > 0) {
                parts.add(count + " " + status.label());
            }
        }
        counts.forEach((label, count) -> {
            if (java.util.Arrays.stream(StepStatus.values()).noneMatch(status -> status.label().equals(label))) {
                parts.add(count + " " + label);
            }
        });
        return parts.isEmpty() ? "-" : String.join(", ", parts);
    }

    static void printSummary(PrintWriter out, RunOutcome outcome, boolean interactive) {
        out.println();
        out.printf(Locale.ROOT, "Run %d %s in %.1f s:%n", outcome.runId(), outcome.status(), outcome.elapsed().toMillis() / 1000.0);
        out.printf(Locale.ROOT, "  %-14s %-21s %s%n", "machine", "state", "last step");
        for (Map.Entry<String, String> machine : outcome.machines().entrySet()) {
            out.printf(Locale.ROOT, "  %-14s %-21s %s%n", machine.getKey(), machine.getValue(), abbreviate(outcome.messages().get(machine.getKey())));
        }
        for (OperatorRequest request : outcome.waiting()) {
            out.println();
            out.println("A person must do this on " + request.machine() + " (step " + request.step() + " is waiting-for-operator):");
            out.print(request.text());
            out.println("  Then run `macfleet provision` again for the same target" + (interactive ? "" : " (without --non-interactive to confirm here)")
                    + ", or confirm it in the console: POST /api/v1/runs/" + request.runId() + "/machines/" + request.machine() + "/steps/"
                    + request.step() + "/confirmation");
        }
    }

    private static String abbreviate(String text) {
        if (text == null) {
            return "";
        }
        String single = text.replace('\n', ' ');
        return single.length() <= 150 ? single : single.substring(0, 150) + "...";
    }

    @Command(name = "runs", mixinStandardHelpOptions = true, description = "The latest provisioning runs, newest first.")
    static class Runs implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "20", description = "How many (default ${DEFAULT-VALUE}).")
        int limit;

        @Mixin
        JsonOption json;

        @Inject
        ProvisioningService service;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            List<RunView.Run> runs = service.runs(limit);
            if (json.on()) {
                out.println(Json.MAPPER.writeValueAsString(runs));
            } else {
                out.printf(Locale.ROOT, "%-5s %-16s %-12s %-21s %-20s %-12s %s%n", "run", "playbook", "cluster", "status", "started", "by", "steps");
                for (RunView.Run run : runs) {
                    out.printf(Locale.ROOT, "%-5d %-16s %-12s %-21s %-20s %-12s %s%n", run.id(), run.playbook(), run.cluster() == null ? "-" : run.cluster(),
                            run.status(), run.createdAt().toString().substring(0, 19), run.startedBy(), describeCounts(run.counts()));
                }
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "One run: every step of every machine with its state, attempts and summary.")
    static class Show implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "RUN")
        long runId;

        @Mixin
        JsonOption json;

        @Inject
        ProvisioningService service;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            var detail = service.run(runId);
            if (detail.isEmpty()) {
                throw CommandException.usage("no run " + runId);
            }
            if (json.on()) {
                out.println(Json.MAPPER.writeValueAsString(detail.get()));
                out.flush();
                return ExitCodes.OK;
            }
            RunView.Run run = detail.get().run();
            out.println("Run " + run.id() + ": playbook " + run.playbook() + ", " + run.status() + ", started " + run.createdAt() + " by " + run.startedBy()
                    + (run.leaseOwner() == null ? "" : ", worked on by " + run.leaseOwner()));
            Map<String, String> states = detail.get().machineStates();
            String machine = null;
            for (RunView.Step step : detail.get().steps()) {
                if (!step.machine().equals(machine)) {
                    machine = step.machine();
                    out.println(machine + " (" + states.get(machine) + "):");
                }
                out.printf(Locale.ROOT, "  %-26s %-22s attempts %d  %s%n", step.step(), step.status(), step.attempts(), abbreviate(step.summary()));
            }
            for (RunView.Confirmation confirmation : detail.get().confirmations()) {
                out.println("confirmed: " + confirmation.machine() + " " + confirmation.step() + " by " + confirmation.actor() + " at "
                        + confirmation.confirmedAt() + (confirmation.verified() ? ", verified" : ", NOT verified: " + abbreviate(confirmation.detail())));
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "validate", mixinStandardHelpOptions = true, description = "Check a playbook file, or every *.yaml of a directory.",
            exitCodeListHeading = "%nExit codes:%n", exitCodeList = {"0:valid", "1:errors (listed as file:line:column: message)"})
    static class Validate implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "FILE|DIR")
        Path path;

        @Override
        public Integer call() {
            return validate(path, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    static int validate(Path path, PrintWriter out, PrintWriter err) {
        List<PlaybookLoader.Problem> problems = PlaybookLoader.validate(path);
        if (problems.isEmpty()) {
            out.println(path + ": valid");
            out.flush();
            return ExitCodes.OK;
        }
        problems.forEach(err::println);
        err.println(problems.size() + " error(s) in " + path);
        err.flush();
        throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
    }
}
