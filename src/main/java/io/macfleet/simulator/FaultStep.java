package io.macfleet.simulator;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.Locale;

/**
 * One fault to inject, as written in a scenario file, sent to the control API or typed on the CLI.
 * Machine faults name {@code machine}; cable faults name the port in {@code cable}.
 *
 * @param fault    the kind, see {@link SimulatedFleet#inject(FaultStep)} and README.md
 * @param millis   delay of {@code slow}
 * @param daemon   launch daemon label of {@code crash-loop} and {@code daemon-crash}
 * @param to       new port of {@code move} (cable in the wrong port)
 * @param peer     far end of {@code plug}
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record FaultStep(String machine, String cable, String fault, Long millis, String daemon, String to, String peer) {

    public static FaultStep machine(String machine, String fault) {
        return new FaultStep(machine, null, fault, null, null, null, null);
    }

    public static FaultStep cable(String port, String fault) {
        return new FaultStep(null, port, fault, null, null, null, null);
    }

    String kind() {
        if (fault == null || fault.isBlank()) {
            throw new IllegalArgumentException("a fault step needs 'fault' (one of " + SimulatedFleet.FAULT_KINDS + ")");
        }
        return fault.trim().toLowerCase(Locale.ROOT);
    }
}
