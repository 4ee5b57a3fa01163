package io.macfleet.ssh;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How an operation ended on one machine of a fleet run: a value or the error, never both.
 *
 * @param machine machine name
 * @param value the operation's result, null when it failed
 * @param error why it failed (an {@link SshException} for transport problems), null when it succeeded
 * @param duration the machine's own time, from getting a slot to the end (waiting for a slot not included)
 */
public record MachineResult<T>(String machine, T value, Exception error, Duration duration) {

    public MachineResult {
        Objects.requireNonNull(machine, "machine");
        Objects.requireNonNull(duration, "duration");
        if (error != null && value != null) {
            throw new IllegalArgumentException("a machine result has a value or an error, not both");
        }
    }

    public boolean succeeded() {
        return error == null;
    }

    public Optional<T> valueIfSucceeded() {
        return Optional.ofNullable(value);
    }

    /** The error message (which names the machine) or "ok". */
    public String describe() {
        return error == null ? machine + ": ok" : String.valueOf(error.getMessage());
    }
}
