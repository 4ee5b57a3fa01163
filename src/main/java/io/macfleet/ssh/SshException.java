package io.macfleet.ssh;

/**
 * Why an SSH action on a machine did not produce a result. Every message starts with the machine and its
 * address and says what happened; none contains a secret or command output.
 */
public abstract sealed class SshException extends RuntimeException {

    private final String machine;
    private final String address;
    private final String reason;

    private SshException(SshTarget target, String what, Throwable cause) {
        this(target.machine(), target.address(), what, cause);
    }

    private SshException(String machine, String address, String what, Throwable cause) {
        super(machine + " (" + address + "): " + what, cause);
        this.machine = machine;
        this.address = address;
        this.reason = what;
    }

    /** What happened, without the machine and address prefix of the message. */
    public String reason() {
        return reason;
    }

    public String machine() {
        return machine;
    }

    public String address() {
        return address;
    }

    /** No SSH conversation could be started: name not resolved, connection refused, no answer in time. */
    public static final class Unreachable extends SshException {
        Unreachable(SshTarget target, String what, Throwable cause) {
            super(target, what, cause);
        }
    }

    /** The machine refused our key, or the key could not be read or decrypted. */
    public static final class AuthenticationFailed extends SshException {
        AuthenticationFailed(SshTarget target, String what, Throwable cause) {
            super(target, what, cause);
        }
    }

    /** First contact with a host key that is neither pinned nor recorded, and recording was not allowed. */
    public static final class HostKeyNotTrusted extends SshException {
        private final String presentedFingerprint;

        HostKeyNotTrusted(SshTarget target, String what, String presentedFingerprint) {
            super(target, what, null);
            this.presentedFingerprint = presentedFingerprint;
        }

        public String presentedFingerprint() {
            return presentedFingerprint;
        }
    }

    /** The machine presented a host key other than the pinned or recorded one: possibly a man in the middle. */
    public static final class HostKeyChanged extends SshException {
        private final String expectedFingerprint;
        private final String presentedFingerprint;

        HostKeyChanged(SshTarget target, String what, String expectedFingerprint, String presentedFingerprint) {
            super(target, what, null);
            this.expectedFingerprint = expectedFingerprint;
            this.presentedFingerprint = presentedFingerprint;
        }

        public String expectedFingerprint() {
            return expectedFingerprint;
        }

        public String presentedFingerprint() {
            return presentedFingerprint;
        }
    }

    /** The command did not finish within its command timeout; the connection was closed. */
    public static final class Timeout extends SshException {
        Timeout(SshTarget target, String what) {
            super(target, what, null);
        }
    }

    /** The connection broke after it was established, before the command finished. */
    public static final class ConnectionDropped extends SshException {
        private final boolean commandSent;

        ConnectionDropped(SshTarget target, String what, boolean commandSent, Throwable cause) {
            super(target, what, cause);
            this.commandSent = commandSent;
        }

        /** False when the connection broke before the command was sent, so it certainly did not run. */
        public boolean commandSent() {
            return commandSent;
        }
    }

    /** The command wrote more than the output cap; reading stopped there. */
    public static final class OutputCapExceeded extends SshException {
        OutputCapExceeded(String machine, String address, String what) {
            super(machine, address, what, null);
        }
    }

    /** The command was to run under sudo but its program is not on the allow-list; nothing was sent. */
    public static final class SudoNotAllowed extends SshException {
        SudoNotAllowed(SshTarget target, String what) {
            super(target, what, null);
        }
    }

    /** The command ran and ended with a non-zero exit status or a signal. */
    public static final class CommandFailed extends SshException {
        private final CommandResult result;

        CommandFailed(CommandResult result, String what) {
            super(result.machine(), result.address(), what, null);
            this.result = result;
        }

        public CommandResult result() {
            return result;
        }
    }

    /** An SFTP transfer was refused by the machine (permission denied, no such directory, disk full). */
    public static final class TransferFailed extends SshException {
        TransferFailed(SshTarget target, String what, Throwable cause) {
            super(target, what, cause);
        }
    }
}
