package io.macfleet.simulator;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;
import org.apache.sshd.common.config.keys.KeyUtils;
import org.apache.sshd.common.file.virtualfs.VirtualFileSystemFactory;
import org.apache.sshd.common.io.nio2.Nio2ServiceFactoryFactory;
import org.apache.sshd.common.util.threads.CloseableExecutorService;
import org.apache.sshd.common.util.threads.ThreadUtils;
import org.apache.sshd.core.CoreModuleProperties;
import org.apache.sshd.server.Environment;
import org.apache.sshd.server.ExitCallback;
import org.apache.sshd.server.SshServer;
import org.apache.sshd.server.channel.ChannelSession;
import org.apache.sshd.server.command.Command;
import org.apache.sshd.server.keyprovider.SimpleGeneratorHostKeyProvider;
import org.apache.sshd.server.session.ServerSession;
import org.apache.sshd.sftp.server.FileHandle;
import org.apache.sshd.sftp.server.SftpEventListener;
import org.apache.sshd.sftp.server.SftpSubsystemFactory;

/**
 * The SSH server of one simulated Mac: its own host key (persisted in the machine's state directory), public-key
 * authentication for the fleet's user only, exec channels answered by {@link MacShell}, SFTP rooted at the
 * machine's private file system. IO threads and timers are shared by every server of the fleet.
 */
final class MacSshServer {
    private final SimulatedFleet fleet;
    private final SimulatedMac mac;
    private final String host;
    private final CloseableExecutorService sharedIo;
    private final ScheduledExecutorService sharedTimers;
    private int port;
    private SshServer server;
    private java.net.ServerSocket silentListener;
    private final java.util.List<java.net.Socket> silentConnections = new java.util.concurrent.CopyOnWriteArrayList<>();

    MacSshServer(SimulatedFleet fleet, SimulatedMac mac, String host, int port, CloseableExecutorService sharedIo,
                 ScheduledExecutorService sharedTimers) {
        this.fleet = fleet;
        this.mac = mac;
        this.host = host;
        this.port = port;
        this.sharedIo = sharedIo;
        this.sharedTimers = sharedTimers;
    }

    Path hostKeyFile() {
        return mac.stateDirectory().resolve("ssh_host_ecdsa_key");
    }

    synchronized int port() {
        return port;
    }

    String host() {
        return host;
    }

    synchronized boolean running() {
        return server != null && server.isOpen();
    }

    synchronized void start() throws IOException {
        if (running()) {
            return;
        }
        SshServer sshd = SshServer.setUpDefaultServer();
        sshd.setHost(host);
        sshd.setPort(port);
        SimpleGeneratorHostKeyProvider hostKeys = new SimpleGeneratorHostKeyProvider(hostKeyFile());
        hostKeys.setAlgorithm(KeyUtils.EC_ALGORITHM);
        hostKeys.setKeySize(256);
        hostKeys.setKeySpec(new java.security.spec.ECGenParameterSpec("secp256r1"));
        sshd.setKeyPairProvider(hostKeys);
        sshd.setIoServiceFactoryFactory(new Nio2ServiceFactoryFactory(() -> ThreadUtils.noClose(sharedIo)));
        sshd.setScheduledExecutorService(sharedTimers, false);
        // Without it, small answers wait for the client's delayed ACK (~40 ms per command on Linux).
        CoreModuleProperties.TCP_NODELAY.set(sshd, true);
        sshd.setPasswordAuthenticator(null);
        sshd.setKeyboardInteractiveAuthenticator(null);
        sshd.setPublickeyAuthenticator((user, key, session) -> user.equals(fleet.sshUser()) && authorized(key));
        sshd.setCommandFactory((channel, command) -> new SimulatedCommand(command));
        SftpSubsystemFactory sftp = new SftpSubsystemFactory.Builder().build();
        sftp.addSftpEventListener(new SftpEventListener() {
            @Override
            public void writing(ServerSession session, String remoteHandle, FileHandle localHandle, long offset, byte[] data,
                                int dataOffset, int dataLen) throws IOException {
                if (mac.faults().diskFull()) {
                    throw new FileSystemException(localHandle.getFile().toString(), null, "No space left on device");
                }
            }

            // SFTP runs as the SSH user: it may change only what Unix lets that account change (FileOwners).
            @Override
            public void opening(ServerSession session, String remoteHandle, org.apache.sshd.sftp.server.Handle localHandle) throws IOException {
                if (localHandle instanceof FileHandle file && (file.getOpenOptions().contains(java.nio.file.StandardOpenOption.WRITE)
                        || file.getOpenOptions().contains(java.nio.file.StandardOpenOption.APPEND))) {
                    deniedUnless(mac.fileOwners().mayWrite(fleet.sshUser(), host(file.getFile())), file.getFile());
                } else if (localHandle instanceof FileHandle file) {
                    deniedUnless(mac.fileOwners().mayRead(fleet.sshUser(), host(file.getFile())), file.getFile());
                }
            }

            @Override
            public void creating(ServerSession session, java.nio.file.Path path, java.util.Map<String, ?> attributes) throws IOException {
                deniedUnless(mac.fileOwners().mayChangeNamesIn(fleet.sshUser(), host(path).getParent()), path);
            }

            @Override
            public void moving(ServerSession session, java.nio.file.Path source, java.nio.file.Path target,
                               java.util.Collection<java.nio.file.CopyOption> options) throws IOException {
                deniedUnless(mac.fileOwners().mayChangeNamesIn(fleet.sshUser(), host(source).getParent()), source);
                deniedUnless(mac.fileOwners().mayChangeNamesIn(fleet.sshUser(), host(target).getParent()), target);
            }

            @Override
            public void moved(ServerSession session, java.nio.file.Path source, java.nio.file.Path target,
                              java.util.Collection<java.nio.file.CopyOption> options, Throwable thrown) {
                if (thrown == null) {
                    mac.fileOwners().forget(host(source));
                    mac.fileOwners().forget(host(target));
                }
            }

            @Override
            public void removing(ServerSession session, java.nio.file.Path path, boolean isDirectory) throws IOException {
                deniedUnless(mac.fileOwners().mayChangeNamesIn(fleet.sshUser(), host(path).getParent()), path);
            }

            @Override
            public void removed(ServerSession session, java.nio.file.Path path, boolean isDirectory, Throwable thrown) {
                if (thrown == null) {
                    mac.fileOwners().forget(host(path));
                }
            }

            @Override
            public void modifyingAttributes(ServerSession session, java.nio.file.Path path, java.util.Map<String, ?> attributes) throws IOException {
                deniedUnless(mac.fileOwners().of(host(path)).user().equals(fleet.sshUser()), path);
            }
        });
        sshd.setSubsystemFactories(List.of(sftp));
        sshd.setFileSystemFactory(new VirtualFileSystemFactory(mac.root()));
        sshd.start();
        port = sshd.getPort();
        server = sshd;
    }

    /** The host file of a path of the SFTP server's file system (rooted at the Mac's directory: "/" is its root). */
    private java.nio.file.Path host(java.nio.file.Path path) {
        return path.getFileSystem() == java.nio.file.FileSystems.getDefault() ? path : mac.resolve(path.toAbsolutePath().normalize().toString());
    }

    private void deniedUnless(boolean allowed, java.nio.file.Path path) throws java.nio.file.AccessDeniedException {
        if (!allowed) {
            throw new java.nio.file.AccessDeniedException(path.toString(), null, "Permission denied");
        }
    }

    /**
     * Replaces the SSH server by a listener that accepts TCP connections and never says anything (no SSH banner),
     * as a Mac whose sshd is wedged; {@code false} puts the SSH server back.
     */
    synchronized void silence(boolean silent) throws IOException {
        if (silent) {
            if (silentListener != null) {
                return;
            }
            stop();
            java.net.ServerSocket listener = new java.net.ServerSocket();
            listener.setReuseAddress(true);
            listener.bind(new java.net.InetSocketAddress(host, port));
            silentListener = listener;
            Thread.ofVirtual().name("simulator-silent-" + mac.name()).start(() -> {
                while (!listener.isClosed()) {
                    try {
                        silentConnections.add(listener.accept());
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        } else {
            closeSilentListener();
            // The closed listener releases the port only once its accept() has returned: retry briefly.
            for (int attempt = 0; ; attempt++) {
                try {
                    start();
                    return;
                } catch (java.net.BindException e) {
                    if (attempt >= 40) {
                        throw e;
                    }
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        throw e;
                    }
                }
            }
        }
    }

    private void closeSilentListener() {
        if (silentListener != null) {
            try {
                silentListener.close();
            } catch (IOException e) {
                // Already closed.
            }
            silentListener = null;
        }
        for (java.net.Socket socket : silentConnections) {
            try {
                socket.close();
            } catch (IOException e) {
                // Already closed by the client.
            }
        }
        silentConnections.clear();
    }

    synchronized void stop() {
        closeSilentListener();
        if (server != null) {
            try {
                server.stop(true);
            } catch (IOException e) {
                // Closing immediately cannot fail in a way that leaves the port bound; nothing to do.
            }
            server = null;
        }
    }

    /** A new host key, as after a reinstall: the old key file is removed and the server restarted. */
    synchronized void changeHostKey() throws IOException {
        boolean wasRunning = running();
        stop();
        Files.deleteIfExists(hostKeyFile());
        if (wasRunning) {
            start();
        }
    }

    private boolean authorized(PublicKey key) {
        return fleet.authorizedKeys().stream().anyMatch(allowed -> KeyUtils.compareKeys(allowed, key));
    }

    /** One exec request: runs on a virtual thread, applies the machine's faults, answers through MacShell. */
    private final class SimulatedCommand implements Command {
        private final String commandLine;
        private InputStream in;
        private OutputStream out;
        private OutputStream err;
        private ExitCallback exit;
        private volatile Thread worker;

        SimulatedCommand(String commandLine) {
            this.commandLine = commandLine;
        }

        @Override
        public void setInputStream(InputStream in) {
            this.in = in;
        }

        @Override
        public void setOutputStream(OutputStream out) {
            this.out = out;
        }

        @Override
        public void setErrorStream(OutputStream err) {
            this.err = err;
        }

        @Override
        public void setExitCallback(ExitCallback callback) {
            this.exit = callback;
        }

        @Override
        public void start(ChannelSession channel, Environment env) {
            worker = Thread.ofVirtual().name("simulator-" + mac.name()).start(() -> run(channel));
        }

        private void run(ChannelSession channel) {
            Faults faults = mac.faults();
            try {
                if (faults.hang()) {
                    // Accepted and never answered: the client must time out.
                    Thread.sleep(Long.MAX_VALUE);
                }
                if (faults.slowMillis() > 0) {
                    Thread.sleep(faults.slowMillis());
                }
                BufferedReader stdin = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
                Supplier<String> readLine = () -> {
                    try {
                        return stdin.readLine();
                    } catch (IOException e) {
                        return null;
                    }
                };
                // sshd runs the line as `zsh -c LINE`: the whole line is in that process's arguments.
                mac.recordProcess("zsh -c " + commandLine);
                MacShell.Result result = new MacShell(fleet, mac).run(commandLine, readLine);
                String stdout = faults.garbles(commandLine) ? MacShell.garbage(result.stdout()) : result.stdout();
                if (faults.dropMidCommand()) {
                    byte[] bytes = stdout.getBytes(StandardCharsets.UTF_8);
                    out.write(bytes, 0, bytes.length / 2);
                    out.flush();
                    channel.getSession().close(true);
                    return;
                }
                // Empty streams are not written: each flush is a packet, and sw_vers at scale is mostly packets.
                if (!stdout.isEmpty()) {
                    out.write(stdout.getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
                if (!result.stderr().isEmpty()) {
                    err.write(result.stderr().getBytes(StandardCharsets.UTF_8));
                    err.flush();
                }
                exit.onExit(result.exitCode());
                if (result.afterExit() != null) {
                    // Let the exit status reach the client before the machine goes away.
                    Thread.sleep(150);
                    result.afterExit().run();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException e) {
                // The client went away mid-answer; nothing left to tell it.
            }
        }

        @Override
        public void destroy(ChannelSession channel) {
            Thread thread = worker;
            if (thread != null && mac.faults().hang()) {
                thread.interrupt();
            }
        }
    }
}
