package io.macfleet.ssh;

import net.schmizz.sshj.Config;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.connection.channel.direct.Signal;
import net.schmizz.sshj.userauth.UserAuthException;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import javax.net.SocketFactory;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/** One authenticated SSH connection to one machine; commands run on it as separate channels. */
final class MachineConnection implements AutoCloseable {

    /** Output readers block on the network; virtual threads make that free. */
    private static final ExecutorService READERS = Executors.newVirtualThreadPerTaskExecutor();

    /**
     * Commands are small request/answer exchanges: with Nagle's algorithm the last packets of each wait for a
     * delayed acknowledgement (about 40 ms twice per command on Linux loopback), which dominated a round trip.
     */
    private static final SocketFactory NO_DELAY_SOCKETS = new SocketFactory() {
        @Override
        public Socket createSocket() throws IOException {
            Socket socket = new Socket();
            socket.setTcpNoDelay(true);
            return socket;
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            throw new UnsupportedOperationException("SSHJ creates unconnected sockets");
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
            throw new UnsupportedOperationException("SSHJ creates unconnected sockets");
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            throw new UnsupportedOperationException("SSHJ creates unconnected sockets");
        }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
            throw new UnsupportedOperationException("SSHJ creates unconnected sockets");
        }
    };

    private final SshTarget target;
    private final SSHClient client;

    private MachineConnection(SshTarget target, SSHClient client) {
        this.target = target;
        this.client = client;
    }

    SshTarget target() {
        return target;
    }

    boolean isAlive() {
        return client.isConnected() && client.isAuthenticated();
    }

    /** Connects, verifies the host key and authenticates with the key, within the connect timeout. */
    static MachineConnection open(SshTarget target, Config config, PinnedHostKeyVerifier verifier, KeyProvider key,
                                  Duration connectTimeout) {
        return open(target, config, verifier, key, null, connectTimeout);
    }

    /**
     * Connects, verifies the host key and authenticates with the identities of the ssh-agent listening on the
     * socket, within the connect timeout. The agent is asked first, so a missing agent or an empty one is
     * reported without touching the machine.
     */
    static MachineConnection openWithAgent(SshTarget target, Config config, PinnedHostKeyVerifier verifier,
                                           Path agentSocket, Duration connectTimeout) {
        SshAgentClient agent;
        try {
            agent = SshAgentClient.connect(agentSocket, connectTimeout);
        } catch (IOException | RuntimeException e) {
            throw new SshException.AuthenticationFailed(target, "no ssh.privateKey configured and the ssh-agent is"
                    + " unreachable: cannot connect to SSH_AUTH_SOCK " + agentSocket + " ("
                    + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage())
                    + "); start an agent (`eval $(ssh-agent)`, `ssh-add`) or set ssh.privateKey", e);
        }
        try (agent) {
            List<SshAgentClient.Identity> identities;
            try {
                identities = agent.identities();
            } catch (IOException | RuntimeException e) {
                throw new SshException.AuthenticationFailed(target, "no ssh.privateKey configured and the ssh-agent at "
                        + agentSocket + " could not list its identities: " + e.getMessage(), e);
            }
            if (identities.isEmpty()) {
                throw new SshException.AuthenticationFailed(target, "no ssh.privateKey configured and the ssh-agent at "
                        + agentSocket + " has no identities: add a key with `ssh-add`, or set ssh.privateKey", null);
            }
            return open(target, config, verifier, null, new AgentAuthMethod(agent, identities), connectTimeout);
        }
    }

    private static MachineConnection open(SshTarget target, Config config, PinnedHostKeyVerifier verifier,
                                          KeyProvider key, AgentAuthMethod agent, Duration connectTimeout) {
        SSHClient client = new SSHClient(config);
        int timeoutMillis = (int) connectTimeout.toMillis();
        client.setConnectTimeout(timeoutMillis);
        // Bounds every wait for the machine's answer during the handshake, authentication and channel opening.
        client.getTransport().setTimeoutMs(timeoutMillis);
        client.getConnection().setTimeoutMs(timeoutMillis);
        client.addHostKeyVerifier(verifier);
        client.setSocketFactory(NO_DELAY_SOCKETS);
        // SSHJ reads the server's identification line without a time limit: a machine that accepts TCP but
        // never speaks SSH would hold us forever. The watchdog closes the socket when the connect timeout is up.
        AtomicBoolean timedOut = new AtomicBoolean();
        Thread watchdog = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(connectTimeout);
            } catch (InterruptedException finished) {
                return;
            }
            timedOut.set(true);
            closeSocket(client);
        });
        try {
            client.connect(target.host(), target.port());
        } catch (IOException e) {
            watchdog.interrupt();
            closeQuietly(client);
            if (verifier.refusal().isPresent()) {
                throw verifier.refusal().get();
            }
            throw new SshException.Unreachable(target, timedOut.get()
                    ? "unreachable: no SSH answer within the connect timeout of " + connectTimeout.toMillis() + " ms"
                    : describeConnectFailure(e, connectTimeout), e);
        } catch (RuntimeException e) {
            watchdog.interrupt();
            closeQuietly(client);
            throw e;
        }
        try {
            if (agent == null) {
                client.authPublickey(target.user(), key);
            } else {
                client.auth(target.user(), agent);
            }
        } catch (UserAuthException e) {
            closeQuietly(client);
            throw new SshException.AuthenticationFailed(target, agent == null
                    ? "user " + target.user() + " was not accepted with the key " + target.privateKey() + " (" + e.getMessage() + ")"
                    : agentRefusal(target, agent, e), e);
        } catch (IOException e) {
            closeQuietly(client);
            throw timedOut.get()
                    ? new SshException.Unreachable(target, "unreachable: authentication not finished within the connect"
                    + " timeout of " + connectTimeout.toMillis() + " ms", e)
                    : new SshException.ConnectionDropped(target, "connection lost during authentication: " + reason(e), false, e);
        } finally {
            watchdog.interrupt();
        }
        if (timedOut.get()) {
            closeQuietly(client);
            throw new SshException.Unreachable(target, "unreachable: connection not ready within the connect timeout of "
                    + connectTimeout.toMillis() + " ms", null);
        }
        return new MachineConnection(target, client);
    }

    private static String agentRefusal(SshTarget target, AgentAuthMethod agent, UserAuthException e) {
        List<SshAgentClient.Identity> refused = agent.refused();
        String identities = refused.stream().map(SshAgentClient.Identity::describe).collect(Collectors.joining(", "));
        // SSHJ reports a refusal as "exhausted methods"; an error of our own (the agent would not sign) is kept.
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause.getMessage() != null && cause.getMessage().startsWith(AgentAuthMethod.SIGNING_FAILED)) {
                return "user " + target.user() + ": " + cause.getMessage();
            }
        }
        return refused.isEmpty() ? "user " + target.user() + " was not accepted through the ssh-agent at "
                + agent.socket() + " (" + e.getMessage() + ")"
                : "user " + target.user() + " was refused every identity of the ssh-agent at "
                + agent.socket() + " (" + identities + "); authorize one of them on the machine, or set ssh.privateKey";
    }

    private static String describeConnectFailure(IOException e, Duration connectTimeout) {
        if (e instanceof UnknownHostException) {
            return "unreachable: host name cannot be resolved";
        }
        if (e instanceof ConnectException) {
            return "unreachable: connection refused (" + e.getMessage() + ")";
        }
        if (e instanceof NoRouteToHostException) {
            return "unreachable: no route to host";
        }
        if (e instanceof SocketTimeoutException) {
            return "unreachable: no answer within the connect timeout of " + connectTimeout.toMillis() + " ms";
        }
        return "unreachable: SSH handshake failed (" + reason(e) + ")";
    }

    /** Runs one command in its own channel. Throws Timeout or ConnectionDropped; the result otherwise. */
    CommandResult execute(Command command, String rendered, ExecutionLimits limits, int attempt) {
        long start = System.nanoTime();
        long deadline = start + limits.commandTimeout().toNanos();
        Session session;
        Session.Command running;
        try {
            session = client.startSession();
        } catch (IOException e) {
            close();
            throw new SshException.ConnectionDropped(target, "connection lost before `" + rendered + "` was sent: " + reason(e),
                    false, e);
        }
        try {
            running = session.exec(command.render());
        } catch (IOException e) {
            close();
            throw new SshException.ConnectionDropped(target, "connection lost while sending `" + rendered + "`: " + reason(e),
                    true, e);
        }
        if (command.standardInput() != null) {
            // The secret goes on the channel, then end of file so the program stops reading. A command that ends
            // without reading it (a refusal) closes the channel first: that is its answer, not a dropped connection.
            try (java.io.OutputStream input = running.getOutputStream()) {
                input.write(command.standardInput().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                input.flush();
            } catch (IOException e) {
                if (!client.isConnected()) {
                    close();
                    throw new SshException.ConnectionDropped(target, "connection lost while sending the standard input of `"
                            + rendered + "`: " + reason(e), true, e);
                }
            }
        }
        CappedOutput stdout = new CappedOutput(limits.maxOutputBytes());
        CappedOutput stderr = new CappedOutput(limits.maxOutputBytes());
        CompletableFuture<Void> capHit = new CompletableFuture<>();
        CompletableFuture<Void> stdoutRead = read(running.getInputStream(), stdout, capHit);
        CompletableFuture<Void> stderrRead = read(running.getErrorStream(), stderr, capHit);
        try {
            CompletableFuture.anyOf(CompletableFuture.allOf(stdoutRead, stderrRead), capHit)
                    .get(remainingNanos(deadline), TimeUnit.NANOSECONDS);
            if (capHit.isDone()) {
                // Stop the command's output at the source; whatever the other stream still had is dropped.
                try {
                    running.close();
                } catch (IOException e) {
                    close();
                }
            } else {
                // At least 1 ms: SSHJ reads a zero timeout as "wait forever".
                running.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(remainingNanos(deadline))), TimeUnit.MILLISECONDS);
            }
        } catch (TimeoutException | net.schmizz.sshj.connection.ConnectionException e) {
            if (e instanceof TimeoutException || isTimeout(e)) {
                close();
                throw new SshException.Timeout(target, "`" + rendered + "` did not finish within the command timeout of "
                        + limits.commandTimeout().toMillis() + " ms" + (attempt > 1 ? " (attempt " + attempt + ")" : "")
                        + "; the connection was closed");
            }
            throw dropped(rendered, attempt, e);
        } catch (ExecutionException e) {
            throw dropped(rendered, attempt, e.getCause());
        } catch (InterruptedException e) {
            close();
            Thread.currentThread().interrupt();
            throw new SshException.ConnectionDropped(target, "interrupted while `" + rendered + "` ran; the connection"
                    + " was closed", true, e);
        } catch (IOException e) {
            throw dropped(rendered, attempt, e);
        } finally {
            try {
                session.close();
            } catch (IOException ignored) {
                // Closing a finished channel on a broken connection: the connection is replaced anyway.
            }
        }
        Integer exitStatus = running.getExitStatus();
        Signal signal = running.getExitSignal();
        if (exitStatus == null && signal == null && !capHit.isDone() && !client.isConnected()) {
            throw dropped(rendered, attempt, null);
        }
        Duration duration = Duration.ofNanos(System.nanoTime() - start);
        return new CommandResult(target.machine(), target.address(), command, exitStatus,
                signal == null ? null : signal.toString(), stdout.text(), stderr.text(), duration, stdout.truncated(),
                stderr.truncated(), attempt);
    }

    /**
     * Writes a file over SFTP (replacing it), then sets its mode. The content is written to a temporary name
     * next to it and renamed over it, so a reader never sees half a file.
     */
    void upload(String remotePath, byte[] content, int mode) {
        String temporary = remotePath + ".macfleet-upload";
        try (net.schmizz.sshj.sftp.SFTPClient sftp = client.newSFTPClient()) {
            try (net.schmizz.sshj.sftp.RemoteFile file = sftp.open(temporary, java.util.EnumSet.of(
                    net.schmizz.sshj.sftp.OpenMode.WRITE, net.schmizz.sshj.sftp.OpenMode.CREAT, net.schmizz.sshj.sftp.OpenMode.TRUNC))) {
                file.write(0, content, 0, content.length);
            }
            sftp.chmod(temporary, mode);
            sftp.rename(temporary, remotePath, java.util.EnumSet.of(net.schmizz.sshj.sftp.RenameFlags.OVERWRITE));
        } catch (net.schmizz.sshj.sftp.SFTPException e) {
            throw new SshException.TransferFailed(target, "SFTP upload of " + remotePath + " failed: " + e.getStatusCode()
                    + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
        } catch (IOException e) {
            close();
            throw new SshException.ConnectionDropped(target, "connection lost during the SFTP upload of " + remotePath + ": " + reason(e), true, e);
        }
    }

    /** An SFTP channel on this connection, closed by the caller. */
    net.schmizz.sshj.sftp.SFTPClient newSftpClient() throws IOException {
        return client.newSFTPClient();
    }

    /**
     * Opens an SFTP channel on this connection for work that streams files (the node deployment's resumable copies).
     * A broken connection closes this one, so the run opens a fresh connection for the next attempt.
     */
    <T> T withSftp(SshRun.SftpWork<T> work) {
        try (net.schmizz.sshj.sftp.SFTPClient sftp = newSftpClient()) {
            return work.apply(sftp);
        } catch (net.schmizz.sshj.sftp.SFTPException e) {
            throw new SshException.TransferFailed(target, "SFTP failed: " + e.getStatusCode()
                    + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
        } catch (IOException e) {
            if (!isAlive()) {
                close();
                throw new SshException.ConnectionDropped(target, "connection lost during SFTP work: " + e, true, e);
            }
            throw new SshException.TransferFailed(target, e.getMessage() == null ? e.toString() : e.getMessage(), e);
        }
    }

    private static boolean isTimeout(Throwable e) {
        return e.getCause() instanceof TimeoutException
                || (e.getMessage() != null && e.getMessage().toLowerCase().contains("timeout"));
    }

    private SshException dropped(String rendered, int attempt, Throwable cause) {
        close();
        return new SshException.ConnectionDropped(target, "connection dropped while `" + rendered + "` ran"
                + (attempt > 1 ? " (attempt " + attempt + ")" : "") + (cause == null ? "" : ": " + reason(cause)), true, cause);
    }

    /**
     * What went wrong, in words: the exception's message without Java class names (they reach operators through
     * messages, the console and API problem bodies, where a class name says nothing and leaks internals).
     */
    static String reason(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && !message.isBlank()) {
                // SSHJ and the JDK sometimes wrap: "java.net.SocketException: Connection reset" as a message.
                return message.replaceAll("\\b(?:[a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]*(?:Exception|Error): ?", "").strip();
            }
        }
        return e instanceof java.io.EOFException ? "the connection was closed" : "no reason given";
    }

    private static long remainingNanos(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    private static CompletableFuture<Void> read(InputStream stream, CappedOutput output, CompletableFuture<Void> capHit) {
        return CompletableFuture.runAsync(() -> {
            byte[] buffer = new byte[16 * 1024];
            try {
                int count;
                while ((count = stream.read(buffer)) >= 0) {
                    if (!output.append(buffer, count)) {
                        capHit.complete(null);
                        return;
                    }
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, READERS);
    }

    @Override
    public void close() {
        closeQuietly(client);
    }

    private static void closeSocket(SSHClient client) {
        try {
            java.net.Socket socket = client.getSocket();
            if (socket != null) {
                socket.close();
            }
        } catch (IOException ignored) {
            // Closing is all we wanted; a failure to close leaves nothing more to do.
        }
    }

    private static void closeQuietly(SSHClient client) {
        try {
            client.disconnect();
        } catch (IOException | RuntimeException ignored) {
            // Already broken: there is nothing left to close cleanly.
        }
    }

    /** Keeps at most {@code cap} bytes and remembers whether more arrived. */
    private static final class CappedOutput {
        private final int cap;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private volatile boolean truncated;

        CappedOutput(int cap) {
            this.cap = cap;
        }

        /** False once the cap is exceeded. */
        synchronized boolean append(byte[] buffer, int count) {
            int room = cap - bytes.size();
            if (count > room) {
                bytes.write(buffer, 0, room);
                truncated = true;
                return false;
            }
            bytes.write(buffer, 0, count);
            return true;
        }

        synchronized String text() {
            return bytes.toString(StandardCharsets.UTF_8);
        }

        boolean truncated() {
            return truncated;
        }
    }
}
