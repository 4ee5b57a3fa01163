package io.macfleet.facts;

/** Facts of one machine could not be gathered; the message names the machine and the command. */
public class FactsGatheringException extends RuntimeException {
    private final String machine;
    private final String command;
    private final String reason;

    public FactsGatheringException(String machine, String command, String message, Throwable cause) {
        super(machine + ": `" + command + "`: " + message, cause);
        this.machine = machine;
        this.command = command;
        this.reason = message;
    }

    /** What went wrong with the command, without the machine and the command. */
    public String reason() {
        return reason;
    }

    public String machine() {
        return machine;
    }

    public String command() {
        return command;
    }
}
