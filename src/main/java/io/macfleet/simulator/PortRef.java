package io.macfleet.simulator;

import java.util.Objects;

/** One Thunderbolt port (1..6, the receptacle number system_profiler reports) of one simulated Mac. */
public record PortRef(String machine, int port) {
    public PortRef {
        Objects.requireNonNull(machine, "machine");
        if (port < 1 || port > MacSpec.THUNDERBOLT_PORTS) {
            throw new IllegalArgumentException("Thunderbolt port " + port + " of " + machine + " does not exist (1.." + MacSpec.THUNDERBOLT_PORTS + ")");
        }
    }

    /** Parses "studio-01:2". */
    public static PortRef parse(String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("expected machine:port, got '" + text + "'");
        }
        try {
            return new PortRef(text.substring(0, colon).trim(), Integer.parseInt(text.substring(colon + 1).trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected machine:port with a port number, got '" + text + "'");
        }
    }

    @Override
    public String toString() {
        return machine + ":" + port;
    }
}
