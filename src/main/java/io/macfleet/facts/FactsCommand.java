package io.macfleet.facts;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import io.macfleet.command.Actors;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.database.DatabaseException;
import io.macfleet.inventory.Machine;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshOptions;
import io.macfleet.ssh.SshSettings;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet facts}: gather what the machines really are over SSH and store it; {@code facts show} reads it back. */
@Command(name = "facts", mixinStandardHelpOptions = true,
        description = "Gather facts (hardware, macOS, Thunderbolt, network, RDMA, bootstrap token, uptime, disk) over SSH from the machines"
                + " of the applied inventory and store them.",
        subcommands = {FactsCommand.Show.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:facts of every machine gathered and stored", "1:at least one machine failed (the others are stored)",
                "2:usage error (unknown machine or cluster, bad option)"})
public class FactsCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(arity = "0..*", paramLabel = "MACHINE", description = "Machines to gather (default: every machine of the inventory).")
    List<String> machines = new ArrayList<>();

    @Option(names = "--cluster", paramLabel = "CLUSTER", description = "Gather the machines of this cluster.")
    String cluster;

    @Mixin
    SshOptions ssh;

    @Mixin
    JsonOption json;

    @Inject
    FactsService facts;

    @Override
    public Integer call() throws JsonProcessingException {
        PrintWriter out = spec.commandLine().getOut();
        SshSettings settings;
        try {
            settings = ssh.settings(Actors.commandLine());
        } catch (IllegalArgumentException e) {
            throw CommandException.usage(e.getMessage());
        }
        FactsService.Gathering gathering;
        try {
            List<Machine> selected = facts.select(cluster, machines);
            if (selected.isEmpty()) {
                throw CommandException.usage("no machines to gather (apply an inventory with `macfleet inventory apply DIR`)");
            }
            gathering = facts.gather(selected, settings);
        } catch (IllegalArgumentException e) {
            // Unknown names and database failures are reported by the CLI's one failure handler (CommandFailure).
            throw CommandException.usage(e.getMessage());
        }
        if (json.on()) {
            List<GatheredMachine> results = gathering.results().stream()
                    .map(result -> new GatheredMachine(result.machine(), result.succeeded(), result.succeeded() ? result.value() : null,
                            result.succeeded() ? null : message(result), result.duration().toMillis()))
                    .toList();
            out.println(FactsStore.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(new GatheringReport(results,
                    gathering.results().size() - gathering.failed(), gathering.failed(), settings.parallelism(), gathering.elapsed().toMillis())));
        } else {
            for (MachineResult<MachineFacts> result : gathering.results()) {
                out.println(result.succeeded()
                        ? String.format(Locale.ROOT, "%-16s ok      %s, %d GB, macOS %s (%s), %d ms", result.machine(), summary(result.value()),
                        result.value().memoryGigabytes(), result.value().macosVersion(), result.value().macosBuild(), result.duration().toMillis())
                        + unreadableNote(result.value())
                        : String.format(Locale.ROOT, "%-16s FAILED  %s", result.machine(), message(result)));
            }
            out.printf(Locale.ROOT, "facts: %d of %d machine(s) gathered and stored in %.1f s (%d in parallel)%s%n",
                    gathering.results().size() - gathering.failed(), gathering.results().size(), gathering.elapsed().toMillis() / 1000.0,
                    settings.parallelism(), gathering.failed() == 0 ? "" : "; " + gathering.failed() + " failed, nothing stored for them");
        }
        out.flush();
        if (gathering.failed() > 0) {
            throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
        }
        return ExitCodes.OK;
    }

    /** The {@code --json} output of a gathering: each machine's result, the counts, and how long it took. */
    public record GatheringReport(List<GatheredMachine> results, long gathered, long failed, int parallel, long elapsedMs) {
    }

    /** One machine's result: its facts when it answered, else the error (the other one is left out of the JSON). */
    public record GatheredMachine(String machine, boolean ok,
                                  @JsonInclude(JsonInclude.Include.NON_NULL) MachineFacts facts,
                                  @JsonInclude(JsonInclude.Include.NON_NULL) String error,
                                  long durationMs) {
    }

    static String message(MachineResult<?> result) {
        String message = result.error().getMessage();
        return message == null ? result.error().getClass().getSimpleName() : message;
    }

    /** Names the optional facts that could not be read (the machine's other facts were stored). */
    static String unreadableNote(MachineFacts facts) {
        return facts.unreadableFacts().isEmpty() ? ""
                : "; unreadable: " + String.join(", ", facts.unreadableFacts().keySet()) + " (see `macfleet facts show " + facts.machine() + "`)";
    }

    static String summary(MachineFacts facts) {
        return facts.modelName() + " " + facts.modelIdentifier() + ", " + facts.chip() + ", serial " + facts.serialNumber();
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show the stored facts of a machine (the latest, or all with --history).",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:facts shown", "1:no facts stored for the machine yet", "2:unknown machine"})
    static class Show implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "MACHINE")
        String machine;

        @Option(names = "--history", description = "Every stored observation, newest first.")
        boolean history;

        @Mixin
        JsonOption json;

        @Inject
        FactsService facts;

        @Override
        public Integer call() throws JsonProcessingException {
            PrintWriter out = spec.commandLine().getOut();
            if (facts.machine(machine).isEmpty()) {
                throw CommandException.usage("unknown machine '" + machine + "': not in the applied inventory");
            }
            List<MachineFacts> observations = history ? facts.history(machine)
                    : facts.latest(machine).map(observation -> List.of(observation.facts())).orElse(List.of());
            if (observations.isEmpty()) {
                throw CommandException.checkFailed("no facts stored for " + machine + " yet (run `macfleet facts " + machine + "`)");
            }
            if (json.on()) {
                out.println(FactsStore.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(history ? observations : observations.getFirst()));
            } else {
                for (MachineFacts observation : observations) {
                    out.print(FactsText.text(observation));
                    if (history) {
                        out.println();
                    }
                }
            }
            out.flush();
            return ExitCodes.OK;
        }
    }
}
