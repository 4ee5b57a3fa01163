package io.macfleet.facts;

/**
 * Output of a command on a Mac could not be understood. The message names the command and the place in
 * its output (a JSON path or a line number) and what was expected there.
 */
public class FactsParseException extends RuntimeException {
    private final String command;

    public FactsParseException(String command, String message) {
        super(command + ": " + message);
        this.command = command;
    }

    public String command() {
        return command;
    }
}
