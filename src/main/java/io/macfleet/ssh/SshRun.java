package io.macfleet.ssh;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.secrets.SecretReference;
import io.macfleet.secrets.SecretUnavailableException;
import net.schmizz.sshj.Config;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;
import net.schmizz.sshj.userauth.password.PasswordFinder;
import net.schmizz.sshj.userauth.password.Resource;

import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A unit of work over SSH (one CLI command, one scheduled job). Connections are opened on first use, reused
 * for every later command to the same machine, replaced when they broke, and all closed by {@link #close()}.
 * Private keys are read and decrypted once per run. Safe for use from many threads.
 */
public final class SshRun implements AutoCloseable {

    private final SshSettings settings;
    private final HostKeyStore hostKeys;
    private final AuditLog auditLog;
    private final Clock clock;
    private final Config sshjConfig;
    private final Map<String, Slot> connections = new ConcurrentHashMap<>();
    private final Map<List<SecretReference>, KeyProvider> keys = new ConcurrentHashMap<>();
    private volatile boolean closed;

    SshRun(SshSettings settings, HostKeyStore hostKeys, AuditLog auditLog, Clock clock, Config sshjConfig) {
        this.settings = settings;
        this.hostKeys = hostKeys;
        this.auditLog = auditLog;
        this.clock = clock;
        this.sshjConfig = sshjConfig;
    }

    /** Runs a command with the default limits of the settings. */
    public CommandResult execute(SshTarget target, Command command) {
        return execute(target, command, settings.limits());
    }

    /**
     * Runs a command and returns its result, whatever its exit status. A command marked idempotent is sent
     * a second time when the connection dropped while it ran; any command is sent again when the connection
     * broke before it was sent. Every attempt is written to the audit log.
     *
     * @throws SshException when no result could be had (unreachable, authentication, host key, timeout, dropped
     *                      connection, sudo refused)
     */
    public CommandResult execute(SshTarget target, Command command, ExecutionLimits limits) {
        if (closed) {
            throw new IllegalStateException("this SSH run is closed");
        }
        // Shown in the audit log and in messages: secret arguments redacted. The real line is rendered when sent.
        String rendered = command.display();
        if (command.sudo() && !settings.sudoAllowList().contains(command.program())) {
            SshException refused = new SshException.SudoNotAllowed(target, "`" + rendered + "` refused, nothing was sent: "
                    + command.program() + " is not on the sudo allow-list " + settings.sudoAllowList().stream().sorted().toList());
            audit(target, rendered + " [refused: not on the sudo allow-list]", AuditEvent.Outcome.FAILURE);
            throw refused;
        }
        try {
            return attempt(target, command, rendered, limits, 1);
        } catch (SshException.ConnectionDropped first) {
            if (first.commandSent() && !command.idempotent()) {
                throw new SshException.ConnectionDropped(target, first.reason()
                        + "; not sent again: the command is not marked idempotent, so it may or may not have run",
                        true, first);
            }
            try {
                return attempt(target, command, rendered, limits, 2);
            } catch (SshException second) {
                second.addSuppressed(first);
                throw second;
            }
        }
    }

    private CommandResult attempt(SshTarget target, Command command, String rendered, ExecutionLimits limits, int attempt) {
        long start = System.nanoTime();
        try {
            MachineConnection connection = connection(target, limits);
            CommandResult result = connection.execute(command, rendered, limits, attempt);
            audit(target, rendered + " [exit " + result.exitStatus()
                            + (result.exitSignal() == null ? "" : ", signal " + result.exitSignal())
                            + ", " + result.duration().toMillis() + " ms"
                            + (result.truncated() ? ", output truncated at " + limits.maxOutputBytes() + " bytes" : "")
                            + (attempt > 1 ? ", attempt " + attempt : "") + "]",
                    result.succeeded() ? AuditEvent.Outcome.SUCCESS : AuditEvent.Outcome.FAILURE);
            return result;
        } catch (SshException e) {
            audit(target, rendered + " [" + kind(e) + ", " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms"
                    + (attempt > 1 ? ", attempt " + attempt : "") + "]", AuditEvent.Outcome.FAILURE);
            throw e;
        }
    }

    /**
     * Opens the run's connection to the machine now (or confirms the open one), within the connect timeout, so that
     * a caller can start its own deadline for the commands once the machine is reached. A failure is audited like a
     * command's.
     */
    public void connect(SshTarget target) {
        if (closed) {
            throw new IllegalStateException("this SSH run is closed");
        }
        long start = System.nanoTime();
        try {
            connection(target, settings.limits());
        } catch (SshException e) {
            audit(target, "(connect) [" + kind(e) + ", " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms]",
                    AuditEvent.Outcome.FAILURE);
            throw e;
        }
    }

    /** The limits commands get unless they name their own. */
    public ExecutionLimits limits() {
        return settings.limits();
    }

    /**
     * Writes a file on the machine over SFTP (atomically: a temporary name renamed over the target) and sets its
     * mode. Audited as {@code sftp.put} with the path, size and mode, never the content.
     */
    public void upload(SshTarget target, String remotePath, byte[] content, int mode) {
        if (closed) {
            throw new IllegalStateException("this SSH run is closed");
        }
        String detail = remotePath + " (" + content.length + " bytes, mode " + Integer.toOctalString(mode) + ")";
        long start = System.nanoTime();
        try {
            connection(target, settings.limits()).upload(remotePath, content, mode);
            auditLog.record(new AuditEvent(clock.instant(), settings.actor(), target.machine(), "sftp.put",
                    detail + " [" + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms]", AuditEvent.Outcome.SUCCESS));
        } catch (SshException e) {
            auditLog.record(new AuditEvent(clock.instant(), settings.actor(), target.machine(), "sftp.put",
                    detail + " [" + kind(e) + "]", AuditEvent.Outcome.FAILURE));
            throw e;
        }
    }

    /** Work done with an SFTP channel of a run's connection. */
    @FunctionalInterface
    public interface SftpWork<T> {
        T apply(net.schmizz.sshj.sftp.SFTPClient sftp) throws IOException;
    }

    /**
     * Runs {@code work} with an SFTP channel on the run's connection to the machine (opened, host key pinned and
     * authenticated as for commands). Audited as {@code sftp.session} with what the caller says it did.
     */
    public <T> T withSftp(SshTarget target, String description, SftpWork<T> work) {
        if (closed) {
            throw new IllegalStateException("this SSH run is closed");
        }
        long start = System.nanoTime();
        try {
            T result = connection(target, settings.limits()).withSftp(work);
            auditLog.record(new AuditEvent(clock.instant(), settings.actor(), target.machine(), "sftp.session",
                    description + " [" + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms]", AuditEvent.Outcome.SUCCESS));
            return result;
        } catch (SshException e) {
            auditLog.record(new AuditEvent(clock.instant(), settings.actor(), target.machine(), "sftp.session",
                    description + " [" + kind(e) + ": " + e.getMessage() + "]", AuditEvent.Outcome.FAILURE));
            throw e;
        }
    }

    /** Work on several SFTP channels to one machine, the first on the run's connection. */
    @FunctionalInterface
    public interface StripedSftpWork<T> {
        T apply(List<net.schmizz.sshj.sftp.SFTPClient> channels) throws IOException;
    }

    /**
     * Like {@link #withSftp}, with up to {@code connections} SFTP channels, each on a connection of its own (the
     * first is the run's; the others are opened for this work and closed after it), so that a large transfer is
     * encrypted and decrypted on several threads at both ends. A machine that refuses the extra connections (sshd's
     * MaxStartups, a firewall) just gets fewer: the work always has at least the first channel.
     */
    public <T> T withSftpStripes(SshTarget target, String description, int connections, StripedSftpWork<T> work) {
        if (connections <= 1) {
            return withSftp(target, description, sftp -> work.apply(List.of(sftp)));
        }
        return withSftp(target, description, first -> {
            List<MachineConnection> extra = new ArrayList<>();
            List<net.schmizz.sshj.sftp.SFTPClient> channels = new ArrayList<>(List.of(first));
            try {
                // Opened at the same time: each costs a key exchange and an authentication.
                List<Future<MachineConnection>> opening = new ArrayList<>();
                try (ExecutorService openers = Executors.newVirtualThreadPerTaskExecutor()) {
                    for (int index = 1; index < connections; index++) {
                        opening.add(openers.submit(() -> openConnection(target, settings.limits())));
                    }
                }
                for (Future<MachineConnection> connection : opening) {
                    try {
                        extra.add(connection.get());
                    } catch (ExecutionException refused) {
                        // Fewer connections: the work goes on with those that opened.
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("interrupted while connecting to " + target.machine());
                    }
                }
                for (MachineConnection connection : extra) {
                    channels.add(connection.newSftpClient());
                }
                return work.apply(List.copyOf(channels));
            } finally {
                for (int index = 1; index < channels.size(); index++) {
                    try {
                        channels.get(index).close();
                    } catch (IOException | RuntimeException ignored) {
                        // Closing its connection below ends it anyway.
                    }
                }
                extra.forEach(MachineConnection::close);
            }
        });
    }

    private static String kind(SshException e) {
        return switch (e) {
            case SshException.Unreachable ignored -> "unreachable";
            case SshException.AuthenticationFailed ignored -> "authentication failed";
            case SshException.HostKeyNotTrusted refused -> "host key not trusted: " + refused.presentedFingerprint();
            case SshException.HostKeyChanged changed -> "host key changed: expected " + changed.expectedFingerprint()
                    + ", presented " + changed.presentedFingerprint();
            case SshException.Timeout ignored -> "timeout";
            case SshException.ConnectionDropped ignored -> "connection dropped";
            case SshException.OutputCapExceeded ignored -> "output cap exceeded";
            case SshException.SudoNotAllowed ignored -> "refused: not on the sudo allow-list";
            case SshException.CommandFailed ignored -> "failed";
            case SshException.TransferFailed ignored -> "transfer failed";
        };
    }

    private void audit(SshTarget target, String detail, AuditEvent.Outcome outcome) {
        auditLog.record(new AuditEvent(clock.instant(), settings.actor(), target.machine(), "ssh.exec", detail, outcome));
    }

    /** The run's live connection to the machine, opening (or replacing a broken) one as needed. */
    private MachineConnection connection(SshTarget target, ExecutionLimits limits) {
        Slot slot = connections.computeIfAbsent(target.machine(), machine -> new Slot());
        // One connection attempt per machine at a time; other machines are not held up.
        slot.lock.lock();
        try {
            if (slot.connection != null && slot.connection.isAlive() && slot.connection.target().equals(target)) {
                return slot.connection;
            }
            if (slot.connection != null) {
                slot.connection.close();
                slot.connection = null;
            }
            slot.connection = openConnection(target, limits);
            if (closed) {
                slot.connection.close();
                throw new IllegalStateException("this SSH run is closed");
            }
            return slot.connection;
        } finally {
            slot.lock.unlock();
        }
    }

    /** A new connection to the machine, host key pinned, authenticated. */
    private MachineConnection openConnection(SshTarget target, ExecutionLimits limits) {
        PinnedHostKeyVerifier verifier = new PinnedHostKeyVerifier(target, hostKeys, settings.acceptNewHostKeys(),
                auditLog, settings.actor(), clock);
        // A configured key wins; the ssh-agent is asked only for machines without one.
        return target.privateKey() == null
                ? MachineConnection.openWithAgent(target, sshjConfig, verifier, agentSocket(target), limits.connectTimeout())
                : MachineConnection.open(target, sshjConfig, verifier, key(target), limits.connectTimeout());
    }

    /** SSH_AUTH_SOCK of the settings' environment: tests point it at an agent of their own. */
    private Path agentSocket(SshTarget target) {
        String socket = settings.environment().get("SSH_AUTH_SOCK");
        if (socket == null || socket.isBlank()) {
            throw new SshException.AuthenticationFailed(target,
                    "no ssh.privateKey configured and no ssh-agent (SSH_AUTH_SOCK is not set)", null);
        }
        try {
            return Path.of(socket);
        } catch (InvalidPathException e) {
            throw new SshException.AuthenticationFailed(target, "no ssh.privateKey configured and SSH_AUTH_SOCK is not a"
                    + " valid path: " + e.getMessage(), e);
        }
    }

    private KeyProvider key(SshTarget target) {
        List<SecretReference> reference = target.passphrase() == null
                ? List.of(target.privateKey()) : List.of(target.privateKey(), target.passphrase());
        KeyProvider cached = keys.get(reference);
        if (cached != null) {
            return cached;
        }
        KeyProvider loaded = load(target);
        keys.putIfAbsent(reference, loaded);
        return loaded;
    }

    private KeyProvider load(SshTarget target) {
        String content;
        try {
            content = target.privateKey().resolve(settings.environment());
        } catch (SecretUnavailableException e) {
            throw new SshException.AuthenticationFailed(target, "private key unavailable: " + e.getMessage(), e);
        }
        PasswordFinder passphrase = target.passphrase() == null ? null : new PasswordFinder() {
            @Override
            public char[] reqPassword(Resource<?> resource) {
                // A passphrase file usually ends with a line break that is not part of the passphrase.
                return target.passphrase().resolve(settings.environment()).replaceFirst("\\R\\z", "").toCharArray();
            }

            @Override
            public boolean shouldRetry(Resource<?> resource) {
                return false;
            }
        };
        try (SSHClient loader = new SSHClient(sshjConfig)) {
            KeyProvider provider = loader.loadKeys(content, null, passphrase);
            // Decrypt now, once: a wrong passphrase is reported here rather than as a refused login, and the
            // (deliberately slow) key derivation of an encrypted key is not repeated for every machine.
            provider.getPrivate();
            provider.getPublic();
            return provider;
        } catch (SecretUnavailableException e) {
            throw new SshException.AuthenticationFailed(target, "passphrase unavailable: " + e.getMessage(), e);
        } catch (IOException | RuntimeException e) {
            throw new SshException.AuthenticationFailed(target, "cannot read the private key " + target.privateKey()
                    + (target.passphrase() == null ? "" : " with the passphrase " + target.passphrase()) + ": "
                    + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage())
                    + (target.passphrase() == null && looksEncrypted(content)
                    ? " (the key looks encrypted: set ssh.passphrase)" : ""), e);
        }
    }

    /** PEM and PKCS#8 say ENCRYPTED in the clear; OpenSSH keys name their key derivation inside the base64. */
    private static boolean looksEncrypted(String content) {
        if (content.contains("ENCRYPTED")) {
            return true;
        }
        String body = content.replaceAll("-----[^-]+-----", "").replaceAll("\\s", "");
        try {
            return new String(java.util.Base64.getDecoder().decode(body), java.nio.charset.StandardCharsets.ISO_8859_1)
                    .contains("bcrypt");
        } catch (IllegalArgumentException notBase64) {
            return false;
        }
    }

    /**
     * Runs the operation on every target, at most {@code parallelism} machines at a time, each on its own
     * virtual thread. A failure or hang of one machine ends up in that machine's result only; the others
     * are not waited for longer. Results come in the order of the targets.
     */
    public <T> List<MachineResult<T>> onFleet(Collection<SshTarget> targets, MachineOperation<T> operation) {
        Set<String> names = new HashSet<>();
        for (SshTarget target : targets) {
            if (!names.add(target.machine())) {
                throw new IllegalArgumentException("machine " + target.machine() + " is listed twice");
            }
        }
        Semaphore slots = new Semaphore(settings.parallelism());
        List<Future<MachineResult<T>>> futures = new ArrayList<>(targets.size());
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (SshTarget target : targets) {
                futures.add(threads.submit(() -> {
                    slots.acquire();
                    long start = System.nanoTime();
                    try {
                        T value = operation.apply(new MachineSession(this, target));
                        return new MachineResult<>(target.machine(), value, null, Duration.ofNanos(System.nanoTime() - start));
                    } catch (Exception e) {
                        return new MachineResult<T>(target.machine(), null, e, Duration.ofNanos(System.nanoTime() - start));
                    } finally {
                        slots.release();
                    }
                }));
            }
            List<MachineResult<T>> results = new ArrayList<>(futures.size());
            for (Future<MachineResult<T>> future : futures) {
                results.add(future.get());
            }
            return results;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("fleet run interrupted", e);
        } catch (ExecutionException e) {
            // Only an Error thrown by an operation gets here; exceptions are per-machine results.
            throw new IllegalStateException("fleet run failed: " + e.getCause(), e.getCause());
        }
    }

    /** Closes every connection of the run. */
    @Override
    public void close() {
        closed = true;
        for (Slot slot : connections.values()) {
            MachineConnection connection = slot.connection;
            if (connection != null) {
                connection.close();
            }
        }
        connections.clear();
    }

    private static final class Slot {
        final ReentrantLock lock = new ReentrantLock();
        volatile MachineConnection connection;
    }
}
