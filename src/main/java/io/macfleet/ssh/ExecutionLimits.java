package io.macfleet.ssh;

import java.time.Duration;
import java.util.Objects;

/**
 * How long and how much one command may take.
 *
 * @param connectTimeout to open the TCP connection and finish the SSH handshake and authentication
 * @param commandTimeout from sending the command to its exit status
 * @param maxOutputBytes cap for stdout and for stderr, each; beyond it reading stops and the channel closes
 */
public record ExecutionLimits(Duration connectTimeout, Duration commandTimeout, int maxOutputBytes) {

    public static final ExecutionLimits DEFAULTS =
            new ExecutionLimits(Duration.ofSeconds(10), Duration.ofSeconds(60), 1024 * 1024);

    public ExecutionLimits {
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(commandTimeout, "commandTimeout");
        if (connectTimeout.isNegative() || connectTimeout.isZero() || connectTimeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("connect timeout must be positive, was " + connectTimeout);
        }
        if (commandTimeout.isNegative() || commandTimeout.isZero()) {
            throw new IllegalArgumentException("command timeout must be positive, was " + commandTimeout);
        }
        if (maxOutputBytes < 1) {
            throw new IllegalArgumentException("output cap must be at least 1 byte, was " + maxOutputBytes);
        }
    }

    public ExecutionLimits withConnectTimeout(Duration timeout) {
        return new ExecutionLimits(timeout, commandTimeout, maxOutputBytes);
    }

    public ExecutionLimits withCommandTimeout(Duration timeout) {
        return new ExecutionLimits(connectTimeout, timeout, maxOutputBytes);
    }

    public ExecutionLimits withMaxOutputBytes(int bytes) {
        return new ExecutionLimits(connectTimeout, commandTimeout, bytes);
    }
}
