package io.macfleet.ssh;

import org.apache.sshd.common.config.keys.KeyUtils;
import org.apache.sshd.common.config.keys.PublicKeyEntry;
import org.apache.sshd.common.keyprovider.KeyPairProvider;
import org.apache.sshd.server.Environment;
import org.apache.sshd.server.ExitCallback;
import org.apache.sshd.server.SshServer;
import org.apache.sshd.server.channel.ChannelSession;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real SSH server on loopback (Apache MINA SSHD) for the transport's tests: a generated ECDSA host key
 * that a test can replace, public-key authentication of user "admin" with the test keys, and an exec
 * handler whose behaviour each test chooses. It records every command line it received.
 */
final class TestSshServer implements AutoCloseable {

    static final String USER = "admin";

    /** What the server does with an exec request. */
    @FunctionalInterface
    interface Behaviour {
        /** Writes output and returns the exit status. */
        int run(Exec exec) throws Exception;
    }

    /** One exec request as the server sees it. */
    record Exec(String commandLine, OutputStream stdout, OutputStream stderr, ChannelSession channel,
                CountDownLatch destroyed) {
        void print(String text) throws IOException {
            stdout.write(text.getBytes(StandardCharsets.UTF_8));
            stdout.flush();
        }

        void printError(String text) throws IOException {
            stderr.write(text.getBytes(StandardCharsets.UTF_8));
            stderr.flush();
        }

        /** Ends the command as killed by a signal: sends exit-signal (RFC 4254 6.10) and closes the channel. */
        void killedBy(String signal) throws IOException {
            org.apache.sshd.common.util.buffer.Buffer buffer = channel.getSession()
                    .createBuffer(org.apache.sshd.common.SshConstants.SSH_MSG_CHANNEL_REQUEST, 64);
            buffer.putUInt(channel.getRecipient());
            buffer.putString("exit-signal");
            buffer.putBoolean(false);
            buffer.putString(signal);
            buffer.putBoolean(false);
            buffer.putString("");
            buffer.putString("");
            channel.writePacket(buffer);
            channel.close(false);
        }

        /** Breaks the TCP connection at once, as a crashing or rebooting machine would. */
        void dropConnection() throws IOException {
            channel.getSession().close(true);
        }
    }

    private final SshServer server;
    private final AtomicReference<KeyPair> hostKey = new AtomicReference<>(generateHostKey());
    private final List<PublicKey> authorizedKeys;
    private final List<String> received = new CopyOnWriteArrayList<>();
    private final java.util.concurrent.atomic.AtomicInteger connections = new java.util.concurrent.atomic.AtomicInteger();
    private volatile Behaviour behaviour;

    private TestSshServer(Behaviour behaviour, List<PublicKey> authorizedKeys, boolean noDelay) throws IOException {
        this.behaviour = behaviour;
        this.authorizedKeys = authorizedKeys;
        server = SshServer.setUpDefaultServer();
        server.setHost("127.0.0.1");
        org.apache.sshd.core.CoreModuleProperties.TCP_NODELAY.set(server, noDelay);
        server.setPort(0);
        server.setKeyPairProvider((KeyPairProvider) session -> List.of(hostKey.get()));
        server.setPasswordAuthenticator(null);
        server.setKeyboardInteractiveAuthenticator(null);
        server.setPublickeyAuthenticator((user, key, session) -> USER.equals(user)
                && this.authorizedKeys.stream().anyMatch(authorized -> KeyUtils.compareKeys(authorized, key)));
        server.setCommandFactory((channel, commandLine) -> new ExecCommand(commandLine));
        server.addSessionListener(new org.apache.sshd.common.session.SessionListener() {
            @Override
            public void sessionCreated(org.apache.sshd.common.session.Session session) {
                connections.incrementAndGet();
            }
        });
        server.start();
    }

    /**
     * A server accepting the unencrypted and the passphrase-protected test ed25519 keys, RSA and ECDSA, with
     * TCP_NODELAY on its sockets (MINA's default is off, which costs about 40 ms per command).
     */
    static TestSshServer start(Behaviour behaviour) throws IOException {
        return new TestSshServer(behaviour, TestKeys.authorizedPublicKeys(), true);
    }

    /** As {@link #start}, but accepting only the given public keys. */
    static TestSshServer startAccepting(Behaviour behaviour, List<PublicKey> authorizedKeys) throws IOException {
        return new TestSshServer(behaviour, List.copyOf(authorizedKeys), true);
    }

    /** As {@link #start}, but with MINA's default of Nagle's algorithm on the server's sockets. */
    static TestSshServer startWithNagle(Behaviour behaviour) throws IOException {
        return new TestSshServer(behaviour, TestKeys.authorizedPublicKeys(), false);
    }

    static Behaviour answer(String stdout, int exitStatus) {
        return exec -> {
            exec.print(stdout);
            return exitStatus;
        };
    }

    /** Never answers; ends only when the client goes away. */
    static Behaviour hang() {
        return exec -> {
            exec.destroyed().await();
            return 0;
        };
    }

    int port() {
        return server.getPort();
    }

    SshTarget target(String machine) {
        return new SshTarget(machine, "127.0.0.1", port(), USER, TestKeys.ED25519, null, null);
    }

    /** The host key fingerprint as MINA (and OpenSSH) compute it: the independent oracle for the tests. */
    String hostKeyFingerprint() {
        return KeyUtils.getFingerPrint(hostKey.get().getPublic());
    }

    /** Replaces the host key, as a reinstalled Mac or a man in the middle would present. */
    void changeHostKey() {
        hostKey.set(generateHostKey());
    }

    void behave(Behaviour newBehaviour) {
        this.behaviour = newBehaviour;
    }

    /** How many SSH connections were accepted. */
    int connections() {
        return connections.get();
    }

    /** The command lines received, in order. */
    List<String> received() {
        return List.copyOf(received);
    }

    @Override
    public void close() throws IOException {
        server.stop(true);
    }

    private static KeyPair generateHostKey() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(256);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private final class ExecCommand implements org.apache.sshd.server.command.Command {
        private final String commandLine;
        private final CountDownLatch destroyed = new CountDownLatch(1);
        private OutputStream stdout;
        private OutputStream stderr;
        private ExitCallback exit;

        ExecCommand(String commandLine) {
            this.commandLine = commandLine;
        }

        @Override
        public void setInputStream(InputStream in) {
        }

        @Override
        public void setOutputStream(OutputStream out) {
            this.stdout = out;
        }

        @Override
        public void setErrorStream(OutputStream err) {
            this.stderr = err;
        }

        @Override
        public void setExitCallback(ExitCallback callback) {
            this.exit = callback;
        }

        @Override
        public void start(ChannelSession channel, Environment env) {
            received.add(commandLine);
            Behaviour current = behaviour;
            Thread.ofVirtual().start(() -> {
                try {
                    int status = current.run(new Exec(commandLine, stdout, stderr, channel, destroyed));
                    if (destroyed.getCount() > 0 && channel.isOpen() && !channel.isClosing()) {
                        exit.onExit(status);
                    }
                } catch (IOException e) {
                    // The client went away while we were writing: nothing to report to.
                    if (destroyed.getCount() > 0) {
                        exit.onExit(255, e.toString());
                    }
                } catch (Exception e) {
                    exit.onExit(255, e.toString());
                }
            });
        }

        @Override
        public void destroy(ChannelSession channel) {
            destroyed.countDown();
        }
    }

    /** The key files in src/test/resources/ssh-test-keys (generated with ssh-keygen, test use only). */
    static final class TestKeys {
        static final String PASSPHRASE = "correct horse battery staple";
        static final io.macfleet.secrets.SecretReference ED25519 = reference("client_ed25519");
        static final io.macfleet.secrets.SecretReference ED25519_PROTECTED = reference("client_ed25519_protected");
        static final io.macfleet.secrets.SecretReference RSA = reference("client_rsa");
        static final io.macfleet.secrets.SecretReference ECDSA = reference("client_ecdsa");

        private TestKeys() {
        }

        static Path directory() {
            return Path.of("src/test/resources/ssh-test-keys").toAbsolutePath();
        }

        static io.macfleet.secrets.SecretReference reference(String name) {
            return io.macfleet.secrets.SecretReference.of("file:" + directory().resolve(name));
        }

        static List<PublicKey> authorizedPublicKeys() {
            try (var files = Files.list(directory())) {
                return files.filter(file -> file.toString().endsWith(".pub")).map(file -> {
                    try {
                        return PublicKeyEntry.parsePublicKeyEntry(Files.readString(file).strip())
                                .resolvePublicKey(null, null, null);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    } catch (GeneralSecurityException e) {
                        throw new IllegalStateException(e);
                    }
                }).toList();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
