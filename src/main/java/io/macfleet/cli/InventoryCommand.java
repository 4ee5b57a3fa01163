package io.macfleet.cli;

import io.macfleet.command.JsonOption;
import io.macfleet.command.ActorOption;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.database.DatabaseException;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.InventoryDirectoryException;
import io.macfleet.inventory.InventoryError;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.Plan;
import io.macfleet.inventory.SavedPlan;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * `macfleet inventory ...`: validate, plan and apply the GitOps inventory (the desired state of the fleet).
 */
@Command(name = "inventory", mixinStandardHelpOptions = true,
        description = "Validate, plan and apply the YAML inventory (the desired state of the fleet).",
        subcommands = {InventoryCommand.Validate.class, InventoryCommand.PlanCommand.class, InventoryCommand.Apply.class,
                InventoryCommand.Example.class, InventoryCommand.Schema.class})
public class InventoryCommand implements Callable<Integer>, PlainCommandLine.NeedsNoContainer {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw CommandException.reported(CommandFailure.Kind.USAGE);
    }

    /** `inventory plan --detailed-exitcode`: the plan has changes. */
    static final int CHANGES_PRESENT = 4;

    /** The question `inventory apply` asks before changing the desired state, when a person is at a terminal. */
    interface Confirmation {
        /** Whether anyone can be asked (standard input and output are a terminal). */
        boolean available();

        boolean confirm(String question);

        Confirmation TERMINAL = new Confirmation() {
            @Override
            public boolean available() {
                return System.console() != null && System.console().isTerminal();
            }

            @Override
            public boolean confirm(String question) {
                String answer = System.console().readLine("%s", question);
                return answer != null && answer.strip().equals("yes");
            }
        };
    }

    /** Made on first use: `inventory validate` runs without Quarkus and should not pay for Jackson's set-up. */
    static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper().findAndRegisterModules().enable(SerializationFeature.INDENT_OUTPUT);
    }

    /** Loads and prints the errors; null when the inventory is invalid. */
    static LoadResult load(Path directory, PrintWriter err) {
        LoadResult result = InventoryLoader.load(directory);
        for (InventoryError error : result.errors()) {
            err.println(error);
        }
        if (!result.valid()) {
            err.println(result.errors().size() + " error(s) in inventory " + directory);
        }
        err.flush();
        return result;
    }

    static void printPlan(Plan plan, PrintWriter out) {
        if (plan.isEmpty()) {
            out.println("No changes. The stored desired state matches the inventory.");
            return;
        }
        for (Plan.Change change : plan.changes()) {
            String sign = switch (change.action()) {
                case ADD -> "+";
                case CHANGE -> "~";
                case REMOVE -> "-";
            };
            out.println("  " + sign + " " + change.kind().name().toLowerCase() + " " + change.name());
            if (change.action() == Plan.Action.REMOVE) {
                continue;
            }
            for (Plan.FieldChange field : change.fields()) {
                if (change.action() == Plan.Action.ADD) {
                    out.println("      " + field.field() + " = " + field.after());
                } else {
                    out.println("      " + field.field() + ": " + (field.before() == null ? "(none)" : field.before()) + " -> "
                            + (field.after() == null ? "(none)" : field.after()));
                }
            }
        }
        out.println();
        out.println("Plan: " + plan.summary());
    }

    @Command(name = "validate", mixinStandardHelpOptions = true,
            description = "Check an inventory directory: schema, names, addresses, references, topology, secrets.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:the inventory is valid", "1:the inventory has errors (all listed as FILE:LINE:COLUMN: message)",
                    "2:the directory cannot be read"})
    static class Validate implements Callable<Integer>, PlainCommandLine.NeedsNoContainer {
        @Parameters(paramLabel = "DIR", description = "the inventory directory")
        Path directory;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            try {
                LoadResult result = load(directory, spec.commandLine().getErr());
                if (!result.valid()) {
                    throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
                }
                spec.commandLine().getOut().printf("inventory %s is valid: %d cluster(s), %d machine(s)%n", directory,
                        result.inventory().clusters().size(), result.inventory().machines().size());
                return ExitCodes.OK;
            } catch (InventoryDirectoryException e) {
                throw CommandException.line(CommandFailure.Kind.USAGE, e.getMessage());
            }
        }
    }

    @Command(name = "plan", mixinStandardHelpOptions = true,
            description = "Show what apply would add, change and remove in the stored desired state; changes nothing.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:the plan was shown (with --detailed-exitcode: there are no changes)",
                    "1:the inventory has errors, or the database failed", "2:the directory cannot be read",
                    "4:with --detailed-exitcode: there are changes (Terraform uses 2, which macfleet uses for unusable input)"})
    static class PlanCommand implements Callable<Integer> {
        @Parameters(paramLabel = "DIR", description = "the inventory directory")
        Path directory;

        @Mixin
        JsonOption json;

        @Option(names = "--detailed-exitcode", description = "exit 0 when there are no changes and 4 when there are (for scripts)")
        boolean detailedExitCode;

        @Option(names = "--out", paramLabel = "FILE",
                description = "save the plan (with the inventory as it is now) to FILE, mode 600, for `macfleet inventory apply FILE`")
        Path planFile;

        @Spec
        CommandSpec spec;

        @Inject
        DesiredStateStore store;

        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                LoadResult result = load(directory, err);
                if (!result.valid()) {
                    throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
                }
                Plan plan = store.plan(result.inventory());
                if (planFile != null) {
                    SavedPlan.of(directory, InventoryLoader.texts(directory), plan).write(planFile);
                }
                if (json.on()) {
                    Map<String, Object> document = new java.util.LinkedHashMap<>();
                    document.put("add", plan.count(Plan.Action.ADD));
                    document.put("change", plan.count(Plan.Action.CHANGE));
                    document.put("remove", plan.count(Plan.Action.REMOVE));
                    document.put("changes", plan.changes());
                    out.println(Json.MAPPER.writeValueAsString(document));
                } else {
                    printPlan(plan, out);
                    if (planFile != null) {
                        out.println("Saved the plan to " + planFile + "; apply exactly it with: macfleet inventory apply " + planFile);
                    }
                }
                out.flush();
                return detailedExitCode && !plan.isEmpty() ? CHANGES_PRESENT : ExitCodes.OK;
            } catch (InventoryDirectoryException e) {
                throw CommandException.line(CommandFailure.Kind.USAGE, e.getMessage());
            } catch (DatabaseException e) {
                throw CommandException.line(CommandFailure.Kind.CHECK_FAILED, "macfleet: " + e.getMessage());
            }
        }
    }

    @Command(name = "apply", mixinStandardHelpOptions = true,
            description = "Make the stored desired state match the inventory, in one transaction, recorded in the audit log.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:applied (or nothing to change)",
                    "1:the inventory has errors, the apply failed, the saved plan is stale or the operator declined; nothing was changed",
                    "2:the directory or plan file cannot be read"})
    static class Apply implements Callable<Integer> {
        @Parameters(paramLabel = "DIR|PLANFILE",
                description = "the inventory directory, or a plan saved by `macfleet inventory plan --out FILE` (applied exactly, or refused when the stored state moved)")
        Path directory;

        @Option(names = "--yes", description = "do not ask for confirmation on a terminal")
        boolean yes;

        /** Asks the person at the terminal; replaced by a fake in tests. */
        Confirmation confirmation = Confirmation.TERMINAL;

        @Mixin
        ActorOption actor;

        @Spec
        CommandSpec spec;

        @Inject
        DesiredStateStore store;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                SavedPlan saved = java.nio.file.Files.isRegularFile(directory) ? SavedPlan.read(directory) : null;
                LoadResult result = saved != null ? InventoryLoader.loadTexts(saved.files()) : load(directory, err);
                if (saved != null) {
                    result.errors().forEach(err::println);
                }
                if (!result.valid()) {
                    err.println("Nothing was applied.");
                    throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
                }
                String source = (saved != null ? "plan " + directory.toAbsolutePath().normalize() + " of " + saved.directory()
                        : directory.toAbsolutePath().normalize().toString()) + actor.osUserNote();
                Plan expected = saved != null ? saved.plan() : null;
                if (saved == null && !yes && confirmation.available()) {
                    // What the person confirms is what is applied: a change made meanwhile makes the apply refuse.
                    expected = store.plan(result.inventory());
                    if (expected.isEmpty()) {
                        printPlan(expected, out);
                        out.flush();
                        return ExitCodes.OK;
                    }
                    printPlan(expected, out);
                    out.flush();
                    if (!confirmation.confirm("Apply these changes to the stored desired state? Only 'yes' is accepted: ")) {
                        out.println("Apply cancelled: nothing was changed.");
                        out.flush();
                        throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
                    }
                }
                boolean shown = expected != null && saved == null;
                Plan plan = store.apply(result.inventory(), actor.name(), source, expected);
                if (!shown) {
                    printPlan(plan, out);
                }
                out.println(plan.isEmpty() ? "Apply complete: nothing to do." : "Apply complete: " + plan.appliedSummary() + ".");
                out.flush();
                return ExitCodes.OK;
            } catch (DesiredStateStore.StalePlanException e) {
                throw CommandException.line(CommandFailure.Kind.CHECK_FAILED, "macfleet inventory apply: " + e.getMessage());
            } catch (SavedPlan.UnreadablePlanException e) {
                throw CommandException.line(CommandFailure.Kind.USAGE, "macfleet inventory apply: " + e.getMessage());
            } catch (InventoryDirectoryException e) {
                throw CommandException.line(CommandFailure.Kind.USAGE, e.getMessage());
            } catch (DatabaseException e) {
                throw CommandException.line(CommandFailure.Kind.CHECK_FAILED, "macfleet: apply failed, nothing was changed: " + e.getMessage());
            }
        }
    }

    @Command(name = "example", mixinStandardHelpOptions = true,
            description = "Write the example inventory (4 Mac Studio M3 Ultra, one cluster) into DIR.")
    static class Example implements Callable<Integer>, PlainCommandLine.NeedsNoContainer {
        @Parameters(paramLabel = "DIR", description = "the directory to write (created if missing)")
        Path directory;

        @Option(names = "--force", description = "overwrite existing files")
        boolean force;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            try {
                for (Path file : ExampleInventory.writeTo(directory, force)) {
                    spec.commandLine().getOut().println("wrote " + file);
                }
                return ExitCodes.OK;
            } catch (IOException e) {
                throw CommandException.line(CommandFailure.Kind.USAGE, "macfleet: " + e.getMessage());
            }
        }
    }

    @Command(name = "schema", mixinStandardHelpOptions = true, description = "Print the inventory JSON Schema.")
    static class Schema implements Callable<Integer>, PlainCommandLine.NeedsNoContainer {
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            spec.commandLine().getOut().print(InventoryLoader.schemaText());
            return ExitCodes.OK;
        }
    }
}
