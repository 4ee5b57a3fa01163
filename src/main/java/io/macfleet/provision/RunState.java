package io.macfleet.provision;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Where a provisioning run stands, as stored in {@code provisioning_run.status} (its {@link #label()}), and which state
 * may follow which: the table below is the only place that says so. {@link #INTERRUPTED} is never stored: it is how a
 * run stored as running is shown when no process holds its lease.
 */
public enum RunState {
    RUNNING, WAITING_FOR_OPERATOR, SUCCEEDED, FAILED, INTERRUPTED;

    /** Thrown for a move the table does not allow; names both states. */
    public static final class IllegalTransitionException extends IllegalStateException {
        IllegalTransitionException(RunState from, RunState to) {
            super("a provisioning run cannot go from " + from.label() + " to " + to.label());
        }
    }

    private static final Map<RunState, Set<RunState>> ALLOWED = Map.of(
            // Stays running when this process stopped working on it (lease lost, interrupted): resuming continues it.
            RUNNING, EnumSet.of(RUNNING, WAITING_FOR_OPERATOR, SUCCEEDED, FAILED),
            // Resumed: by a confirmation, or by `macfleet provision` again.
            WAITING_FOR_OPERATOR, EnumSet.of(RUNNING),
            FAILED, EnumSet.of(RUNNING),
            INTERRUPTED, EnumSet.of(RUNNING),
            // The next `provision` starts a new run; only a run that succeeded between being looked up as unfinished and
            // its lease being taken is run again (every step settled: it succeeds again at once).
            SUCCEEDED, EnumSet.of(RUNNING));

    /** As stored and shown: {@code waiting-for-operator}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static RunState fromLabel(String label) {
        return Arrays.stream(values()).filter(state -> state.label().equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown run status " + label));
    }

    public boolean mayBecome(RunState next) {
        return ALLOWED.get(this).contains(next);
    }

    /** The state {@code next}, or the exception naming both when the table does not allow it. */
    public RunState to(RunState next) {
        if (!mayBecome(next)) {
            throw new IllegalTransitionException(this, next);
        }
        return next;
    }

    /** The run ended here: its finish time is stored, and nothing works on it until someone resumes it. */
    public boolean finished() {
        return this == SUCCEEDED || this == FAILED;
    }
}
