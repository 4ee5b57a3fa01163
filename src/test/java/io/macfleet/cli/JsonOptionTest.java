package io.macfleet.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.JsonOption;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** {@code --json} is declared once (command/JsonOption) and every command keeps the help text it had. */
class JsonOptionTest {

    /** The help texts as they were when each command declared its own --json. */
    private static final Map<String, String> HELP = new TreeMap<>(Map.ofEntries(
            Map.entry("macfleet audit", "print JSON"),
            Map.entry("macfleet inventory plan", "print the plan as JSON"),
            Map.entry("macfleet facts", "Print the results as JSON."),
            Map.entry("macfleet facts show", "Print as JSON."),
            Map.entry("macfleet drift", "Print as JSON."),
            Map.entry("macfleet node plan", "Print the plan as JSON."),
            Map.entry("macfleet node status", "Print JSON."),
            Map.entry("macfleet cabling check", "Print the report as JSON."),
            Map.entry("macfleet supervision", "Print what GET /api/v1/supervision answers."),
            Map.entry("macfleet os-update plan", "As JSON."),
            Map.entry("macfleet os-update status", "As JSON."),
            Map.entry("macfleet mdm status", "Print as JSON."),
            Map.entry("macfleet model add", "Print the catalogue entry as JSON."),
            Map.entry("macfleet model list", "Print JSON."),
            Map.entry("macfleet model show", "Print JSON."),
            Map.entry("macfleet model fit", "Print JSON."),
            Map.entry("macfleet model place", "Print the outcome as JSON (bytesFromControlHost, each Mac's outcome)."),
            Map.entry("macfleet provision", "With --dry-run: the plan as JSON."),
            Map.entry("macfleet provision runs", "As JSON."),
            Map.entry("macfleet provision show", "As JSON."),
            Map.entry("macfleet demo recovery", "Print the demo's JSON answer as it came (for scripts) instead of a table for people."),
            Map.entry("macfleet demo fault", "Print the demo's JSON answer as it came (for scripts) instead of a table for people."),
            Map.entry("macfleet demo machines", "Print the demo's JSON answer as it came (for scripts) instead of a table for people."),
            Map.entry("macfleet demo reset", "Print the demo's JSON answer as it came (for scripts) instead of a table for people.")));

    private static void every(CommandLine command, List<CommandLine> all) {
        all.add(command);
        command.getSubcommands().forEach((name, sub) -> {
            if (name.equals(sub.getCommandName())) {
                every(sub, all);
            }
        });
    }

    @Test
    void everyJsonOptionComesFromTheMixinWithItsCommandsHelpText() {
        List<CommandLine> commands = new ArrayList<>();
        every(PlainCommandLine.configure(new CommandLine(MacfleetCommand.class)), commands);
        Map<String, String> help = new TreeMap<>();
        for (CommandLine command : commands) {
            OptionSpec json = command.getCommandSpec().findOption("--json");
            if (json == null) {
                continue;
            }
            String name = command.getCommandSpec().qualifiedName();
            assertThat(((Field) json.userObject()).getDeclaringClass()).as(name).isEqualTo(JsonOption.class);
            help.put(name, String.join(" ", json.description()));
            // The help as people see it (wrapped: compared with its white space collapsed).
            assertThat(command.getUsageMessage().replaceAll("\\s+", " ")).as(name).contains("--json " + help.get(name));
        }
        assertThat(help).isEqualTo(HELP);
    }
}
