package io.macfleet.command;

import picocli.CommandLine.Option;

/**
 * {@code --json} of every command that can print its answer as JSON; use with {@code @Mixin JsonOption json;} and
 * {@link #on()}. The option is declared once; what it prints differs per command, so each command's help text is in
 * {@code io/macfleet/cli/SharedOptions.properties} under its qualified name ({@code macfleet.facts.json}), and this
 * description is the text of the commands without one there.
 */
public class JsonOption {

    @Option(names = "--json", descriptionKey = "json", description = "Print as JSON.")
    boolean json;

    /** Whether the command should print JSON instead of text for people. */
    public boolean on() {
        return json;
    }
}
