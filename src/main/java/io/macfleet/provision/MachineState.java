package io.macfleet.provision;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Where one machine stands in a run (its {@link #label()} is what the CLI, the API and the console show), and which
 * state may follow which within one execution of the run: a machine starts in progress and ends once.
 */
public enum MachineState {
    IN_PROGRESS, READY, FAILED, WAITING_FOR_OPERATOR;

    /** Thrown for a move the table does not allow; names both states. */
    public static final class IllegalTransitionException extends IllegalStateException {
        IllegalTransitionException(String machine, MachineState from, MachineState to) {
            super(machine + " cannot go from " + from.label() + " to " + to.label() + " in a provisioning run");
        }
    }

    private static final Map<MachineState, Set<MachineState>> ALLOWED = Map.of(
            IN_PROGRESS, EnumSet.of(IN_PROGRESS, READY, FAILED, WAITING_FOR_OPERATOR),
            // Ended for this execution of the run; resuming the run starts the machine in progress again.
            READY, EnumSet.noneOf(MachineState.class),
            // Failed again: the audit of the failure itself broke; the machine's thread says why instead.
            FAILED, EnumSet.of(FAILED),
            WAITING_FOR_OPERATOR, EnumSet.noneOf(MachineState.class));

    /** As shown: {@code in-progress}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static MachineState fromLabel(String label) {
        return Arrays.stream(values()).filter(state -> state.label().equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown machine state " + label));
    }

    public boolean mayBecome(MachineState next) {
        return ALLOWED.get(this).contains(next);
    }

    /** The state {@code next} of {@code machine}, or the exception naming both when the table does not allow it. */
    public MachineState to(String machine, MachineState next) {
        if (!mayBecome(next)) {
            throw new IllegalTransitionException(machine, this, next);
        }
        return next;
    }
}
