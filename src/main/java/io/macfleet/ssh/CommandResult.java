package io.macfleet.ssh;

import java.time.Duration;

/**
 * What a command did on a machine. A result exists whenever the command was sent and its output read; a
 * non-zero exit status or truncated output is a result, not an exception, until {@link #requireSuccess()}.
 *
 * @param machine machine name
 * @param address {@code host:port}
 * @param command the command as built
 * @param exitStatus exit status, or null when the command ended without one (killed by a signal, channel
 *                   closed because the output cap was hit)
 * @param exitSignal name of the signal that ended it (e.g. {@code KILL}), or null
 * @param stdout standard output (UTF-8), at most the cap
 * @param stderr standard error (UTF-8), at most the cap
 * @param duration from sending the command to the end of its output (connecting not included)
 * @param stdoutTruncated stdout was longer than the cap
 * @param stderrTruncated stderr was longer than the cap
 * @param attempts 1, or 2 when it was sent again after the connection dropped
 */
public record CommandResult(String machine, String address, Command command, Integer exitStatus, String exitSignal,
                            String stdout, String stderr, Duration duration, boolean stdoutTruncated,
                            boolean stderrTruncated, int attempts) {

    /** Exit status 0, no signal, complete output. */
    public boolean succeeded() {
        return exitStatus != null && exitStatus == 0 && exitSignal == null && !truncated();
    }

    public boolean truncated() {
        return stdoutTruncated || stderrTruncated;
    }

    /**
     * This result when the command succeeded with complete output; otherwise a typed error whose message
     * has the exit status or signal and the first line of stderr (never stdout).
     */
    public CommandResult requireSuccess() {
        if (truncated()) {
            throw new SshException.OutputCapExceeded(machine, address, "`" + command.display() + "` wrote more than the output cap"
                    + " (" + (stdoutTruncated ? "stdout" : "") + (stdoutTruncated && stderrTruncated ? " and " : "")
                    + (stderrTruncated ? "stderr" : "") + "); reading stopped and the channel was closed");
        }
        if (!succeeded()) {
            String how = exitSignal != null ? "was killed by signal " + exitSignal
                    : exitStatus == null ? "ended without an exit status" : "exited with status " + exitStatus;
            String firstErrorLine = stderr.strip().lines().findFirst().orElse("");
            throw new SshException.CommandFailed(this, "`" + command.display() + "` " + how
                    + (firstErrorLine.isEmpty() ? "" : ": " + abbreviate(firstErrorLine)));
        }
        return this;
    }

    CommandResult withAttempts(int count) {
        return new CommandResult(machine, address, command, exitStatus, exitSignal, stdout, stderr, duration,
                stdoutTruncated, stderrTruncated, count);
    }

    private static String abbreviate(String line) {
        return line.length() <= 200 ? line : line.substring(0, 200) + "...";
    }

    @Override
    public String toString() {
        // Output is left out on purpose: results end up in logs, output can be large or sensitive.
        return "CommandResult[" + machine + " `" + command.display() + "` exit " + exitStatus
                + (exitSignal == null ? "" : " signal " + exitSignal) + ", " + duration.toMillis() + " ms"
                + (truncated() ? ", truncated" : "") + (attempts > 1 ? ", " + attempts + " attempts" : "") + "]";
    }
}
