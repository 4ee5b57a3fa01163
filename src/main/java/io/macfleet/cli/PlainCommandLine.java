package io.macfleet.cli;

import java.util.List;
import java.util.OptionalInt;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * The command line as plain picocli, before Quarkus boots: help, version, usage errors and the commands that need
 * nothing of the container (marked {@link NeedsNoContainer}) are answered here, in a fraction of the time a Quarkus
 * start costs (database, Flyway, scheduler, HTTP listener). Everything else is handed to Quarkus unchanged.
 * {@code serve --help} and {@code demo --help} in particular never bind the HTTP port.
 */
public final class PlainCommandLine {

    private PlainCommandLine() {
    }

    /** Marks a command that runs without the container: no injected fields, no configuration, no database. */
    public interface NeedsNoContainer {
    }

    /** The exit code when the command line was answered here; empty when Quarkus must run it. */
    public static OptionalInt run(String... args) {
        CommandLine commandLine = configure(new CommandLine(MacfleetCommand.class));
        ParseResult parsed;
        try {
            parsed = commandLine.parseArgs(args);
        } catch (ParameterException e) {
            // The same handler execute() uses: the message, the usage of the command concerned, exit code 2.
            try {
                return OptionalInt.of(commandLine.getParameterExceptionHandler().handleParseException(e, args));
            } catch (Exception handlerFailure) {
                return OptionalInt.empty();
            }
        }
        Integer help = CommandLine.executeHelpRequest(parsed);
        if (help != null) {
            return OptionalInt.of(help);
        }
        List<CommandLine> chain = parsed.asCommandLineList();
        if (chain.getLast().getCommand() instanceof NeedsNoContainer) {
            return OptionalInt.of(commandLine.execute(args));
        }
        return OptionalInt.empty();
    }

    /** The settings both command lines (this one and the one Quarkus runs) share. */
    public static CommandLine configure(CommandLine commandLine) {
        attachWorkflowCommands(commandLine);
        return commandLine.setCaseInsensitiveEnumValuesAllowed(true).setExecutionExceptionHandler(new FailureExitCodes());
    }

    /**
     * A workflow's command that users find under a feature's command group is attached here, in the front layer: the
     * feature package may not name the workflow package above it (docs/architecture.md), so {@code macfleet model}
     * does not list {@code place} itself. The parent's factory creates it, so CDI injection works as for the others.
     */
    private static void attachWorkflowCommands(CommandLine commandLine) {
        CommandLine model = commandLine.getSubcommands().get("model");
        if (model != null && !model.getSubcommands().containsKey("place")) {
            model.addSubcommand("place", io.macfleet.models.placement.ModelPlaceCommand.class);
        }
    }
}
