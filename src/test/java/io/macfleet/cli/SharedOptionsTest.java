package io.macfleet.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.ActorOption;
import io.macfleet.command.Actors;
import io.macfleet.ssh.SshOptions;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** Options several commands share are declared once, in their mixin, and every command uses that declaration. */
class SharedOptionsTest {

    private static final Map<String, Class<?>> DECLARED_IN = Map.of(
            "--parallel", SshOptions.class,
            "--accept-new-host-keys", SshOptions.class,
            "--connect-timeout", SshOptions.class,
            "--command-timeout", SshOptions.class);

    private static final Set<String> CHANGING_COMMANDS = Set.of("macfleet inventory apply", "macfleet provision");

    private static void every(CommandLine command, List<CommandLine> all) {
        all.add(command);
        command.getSubcommands().forEach((name, sub) -> {
            if (name.equals(sub.getCommandName())) {
                every(sub, all);
            }
        });
    }

    @Test
    void sshOptionsAndActorComeFromTheirMixins() {
        List<CommandLine> commands = new ArrayList<>();
        every(PlainCommandLine.configure(new CommandLine(MacfleetCommand.class)), commands);
        java.util.Map<String, Integer> sshOptionsPerCommand = new java.util.TreeMap<>();
        for (CommandLine command : commands) {
            for (OptionSpec option : command.getCommandSpec().options()) {
                Class<?> expected = DECLARED_IN.get(option.longestName());
                if (expected != null) {
                    sshOptionsPerCommand.merge(command.getCommandSpec().qualifiedName(), 1, Integer::sum);
                    assertThat(((Field) option.userObject()).getDeclaringClass()).as(command.getCommandSpec().qualifiedName() + " " + option.longestName())
                            .isEqualTo(expected);
                }
                if (option.longestName().equals("--actor") && CHANGING_COMMANDS.contains(command.getCommandSpec().qualifiedName())) {
                    assertThat(((Field) option.userObject()).getDeclaringClass()).isEqualTo(ActorOption.class);
                }
            }
        }
        // Every command that reaches machines has all four, from the one declaration.
        assertThat(sshOptionsPerCommand).containsAllEntriesOf(Map.of("macfleet facts", 4, "macfleet provision", 4,
                "macfleet cabling check", 4, "macfleet cabling config", 4));
        assertThat(sshOptionsPerCommand.values()).containsOnly(4);
    }

    @Test
    void theCommandLineActsAsCliAndTheOperatingSystemUserUnlessAnActorIsGiven() {
        assertThat(Actors.resolve(null)).isEqualTo("cli:" + System.getProperty("user.name"));
        assertThat(Actors.resolve(" ")).isEqualTo(Actors.commandLine());
        assertThat(Actors.resolve("ops-bot")).isEqualTo("ops-bot");
        assertThat(Actors.osUserNote("ops-bot")).isEqualTo(" (os user " + System.getProperty("user.name") + ")");
        assertThat(Actors.osUserNote(null)).isEmpty();
    }
}
