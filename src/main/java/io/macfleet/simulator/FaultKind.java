package io.macfleet.simulator;

import java.util.List;

/**
 * One kind of fault the simulator injects ({@code hang}, {@code unplug}, ...): its name as scenario files, the control
 * API ({@code POST /api/v1/simulator/faults}) and {@code macfleet demo fault} write it, whether it targets a machine or
 * a cable's port, the fault step's parameters it reads, and how it applies. A new kind is one class and one line in
 * {@link FaultKinds#standard()}; a test can give its fleet an extra kind with {@code SimulatedFleet.Builder.fault}.
 */
public interface FaultKind {

    /** What a fault acts on: a machine ({@code FaultStep.machine}) or the cable in a port ({@code FaultStep.cable}). */
    enum Target {
        MACHINE, CABLE
    }

    String name();

    Target target();

    /** The fault step's fields it reads besides the machine or port ({@code millis}, {@code daemon}, {@code to}, {@code peer}). */
    default List<String> parameters() {
        return List.of();
    }

    /**
     * Applies the fault; an IllegalArgumentException names a missing or bad parameter, an IllegalStateException
     * says why it cannot apply now.
     *
     * @return a sentence saying what was done
     */
    String apply(Injection injection);

    /** Where a fault goes: the fleet, the step as written, and its Mac (machine faults) or port (cable faults). */
    record Injection(SimulatedFleet fleet, FaultStep step, SimulatedMac mac, PortRef port) {

        /** The Mac's faults (machine faults only). */
        public Faults faults() {
            return mac.faults();
        }
    }
}
