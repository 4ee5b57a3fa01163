package io.macfleet.ssh;

import org.apache.sshd.common.config.keys.PublicKeyEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * ssh-agent authentication against the system's real OpenSSH ssh-agent, started per test on a socket of its
 * own, and a real SSH server. Without /usr/bin/ssh-agent the tests fail on CI (CI=true) and are skipped elsewhere.
 */
class SshAgentTest {

    private static final Path SSH_AGENT = Path.of("/usr/bin/ssh-agent");
    private static final Path SSH_ADD = Path.of("/usr/bin/ssh-add");

    private final List<TestSshServer> servers = new ArrayList<>();
    private final InMemoryAuditLog audit = new InMemoryAuditLog();
    private final InMemoryHostKeyStore hostKeys = new InMemoryHostKeyStore();
    private Path directory;
    private Path socket;
    private Process agent;

    @BeforeEach
    void startAgent() throws Exception {
        if (!Files.isExecutable(SSH_AGENT) || !Files.isExecutable(SSH_ADD)) {
            String reason = SSH_AGENT + " or " + SSH_ADD + " is missing (Debian package openssh-client)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(reason + "; CI=true requires them");
            }
            Assumptions.abort(reason + "; skipping the ssh-agent test");
        }
        // Unix socket paths are limited to about 100 bytes: a short directory under /tmp.
        directory = Files.createTempDirectory(Path.of("/tmp"), "mf-agent");
        socket = directory.resolve("agent.sock");
        ProcessBuilder builder = new ProcessBuilder(SSH_AGENT.toString(), "-D", "-a", socket.toString())
                .redirectErrorStream(true).redirectOutput(directory.resolve("agent.log").toFile());
        // A key added with `ssh-add -c` needs a confirmation: this "askpass" always declines it.
        builder.environment().put("SSH_ASKPASS", "/bin/false");
        builder.environment().put("SSH_ASKPASS_REQUIRE", "force");
        agent = builder.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Files.exists(socket)) {
            if (!agent.isAlive() || System.nanoTime() > deadline) {
                Assertions.fail("ssh-agent did not create " + socket + ": " + Files.readString(directory.resolve("agent.log")));
            }
            Thread.sleep(20);
        }
    }

    @AfterEach
    void stopAgentAndServers() throws Exception {
        for (TestSshServer server : servers) {
            server.close();
        }
        if (agent != null) {
            agent.destroy();
            if (!agent.waitFor(5, TimeUnit.SECONDS)) {
                agent.destroyForcibly();
            }
        }
        if (directory != null) {
            try (var files = Files.walk(directory)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    /** ssh-add refuses key files others can read; git does not keep the mode, so a private copy is added. */
    private void add(String keyName, String... options) throws Exception {
        Path copy = directory.resolve(keyName);
        Files.copy(TestSshServer.TestKeys.directory().resolve(keyName), copy);
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rw-------"));
        List<String> command = new ArrayList<>(List.of(SSH_ADD.toString()));
        command.addAll(List.of(options));
        command.add(copy.toString());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("SSH_AUTH_SOCK", socket.toString());
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).as("ssh-add finished").isTrue();
        assertThat(process.exitValue()).as("ssh-add %s: %s", keyName, output).isZero();
    }

    private static PublicKey publicKey(String keyName) throws IOException, GeneralSecurityException {
        return PublicKeyEntry.parsePublicKeyEntry(
                        Files.readString(TestSshServer.TestKeys.directory().resolve(keyName + ".pub")).strip())
                .resolvePublicKey(null, null, null);
    }

    private TestSshServer server(List<PublicKey> accepted) throws IOException {
        TestSshServer server = TestSshServer.startAccepting(TestSshServer.answer("ok", 0), accepted);
        servers.add(server);
        return server;
    }

    private SshRun run(Path agentSocket) {
        SshSettings settings = SshSettings.defaults("test").withAcceptNewHostKeys(true)
                .withLimits(new ExecutionLimits(Duration.ofSeconds(5), Duration.ofSeconds(5), 64 * 1024))
                .withEnvironment(Map.of("SSH_AUTH_SOCK", agentSocket.toString()));
        return new SshTransport(settings, hostKeys, audit).openRun();
    }

    private static SshTarget withoutKey(TestSshServer server, String machine) {
        return new SshTarget(machine, "127.0.0.1", server.port(), TestSshServer.USER, null, null, null);
    }

    @Test
    void logsInWithTheEd25519IdentityOfTheAgent() throws Exception {
        add("client_ed25519");
        add("client_rsa");
        // Only the ed25519 key is authorized, and the RSA key is the one offered second: both orders are covered.
        TestSshServer server = server(List.of(publicKey("client_ed25519")));
        try (SshRun run = run(socket)) {
            CommandResult result = run.execute(withoutKey(server, "studio-01"), Command.reading("sw_vers"));
            assertThat(result.stdout()).isEqualTo("ok");
            assertThat(result.exitStatus()).isZero();
        }
        assertThat(server.received()).containsExactly("sw_vers");
    }

    @Test
    void triesTheNextIdentityWhenTheFirstIsRefused() throws Exception {
        add("client_ed25519");
        add("client_rsa");
        TestSshServer server = server(List.of(publicKey("client_rsa")));
        try (SshRun run = run(socket)) {
            assertThat(run.execute(withoutKey(server, "studio-02"), Command.reading("true")).stdout()).isEqualTo("ok");
        }
    }

    @Test
    void logsInWithOnlyAnRsaIdentitySigningWithSha256() throws Exception {
        add("client_rsa");
        TestSshServer server = server(List.of(publicKey("client_rsa")));
        try (SshAgentClient client = SshAgentClient.connect(socket, Duration.ofSeconds(5))) {
            SshAgentClient.Identity rsa = client.identities().getFirst();
            assertThat(rsa.keyType()).isEqualTo("ssh-rsa");
            assertThat(AgentAuthMethod.algorithm(rsa)).isEqualTo("rsa-sha2-256");
            byte[] signature = client.sign(rsa, "data".getBytes(StandardCharsets.UTF_8), SshAgentClient.SSH_AGENT_RSA_SHA2_256);
            assertThat(new SshAgentClient.Reader(signature).string()).isEqualTo("rsa-sha2-256");
        }
        try (SshRun run = run(socket)) {
            assertThat(run.execute(withoutKey(server, "studio-03"), Command.reading("true")).stdout()).isEqualTo("ok");
        }
    }

    @Test
    void listsTheIdentitiesAsSshAddDoes() throws Exception {
        add("client_ed25519");
        add("client_rsa");
        ProcessBuilder builder = new ProcessBuilder(SSH_ADD.toString(), "-l", "-E", "sha256").redirectErrorStream(true);
        builder.environment().put("SSH_AUTH_SOCK", socket.toString());
        Process process = builder.start();
        List<String> listed = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        try (SshAgentClient client = SshAgentClient.connect(socket, Duration.ofSeconds(5))) {
            List<SshAgentClient.Identity> identities = client.identities();
            assertThat(identities).extracting(SshAgentClient.Identity::keyType).containsExactly("ssh-ed25519", "ssh-rsa");
            // ssh-add -l prints "bits SHA256:... comment (TYPE)": the independent oracle for our fingerprints.
            assertThat(listed).hasSize(2);
            for (int i = 0; i < 2; i++) {
                assertThat(listed.get(i)).contains(" " + identities.get(i).fingerprint() + " ")
                        .contains(identities.get(i).comment());
            }
        }
    }

    @Test
    void aServerThatAcceptsNoIdentityGivesTheEveryIdentityRefusedError() throws Exception {
        add("client_ed25519");
        add("client_rsa");
        TestSshServer server = server(List.of(publicKey("client_ecdsa")));
        try (SshRun run = run(socket)) {
            assertThatThrownBy(() -> run.execute(withoutKey(server, "studio-04"), Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("studio-04 (127.0.0.1:" + server.port() + "): user admin was refused every"
                            + " identity of the ssh-agent at " + socket)
                    .hasMessageContaining("ssh-ed25519 SHA256:")
                    .hasMessageContaining("ssh-rsa SHA256:")
                    .hasMessageContaining("or set ssh.privateKey");
        }
        assertThat(server.received()).isEmpty();
    }

    @Test
    void anAgentWithoutIdentitiesIsReportedBeforeTheMachineIsContacted() throws Exception {
        TestSshServer server = server(List.of(publicKey("client_ed25519")));
        try (SshRun run = run(socket)) {
            assertThatThrownBy(() -> run.execute(withoutKey(server, "studio-05"), Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("the ssh-agent at " + socket + " has no identities: add a key with `ssh-add`");
        }
        assertThat(server.connections()).isZero();
    }

    @Test
    void aMissingAgentSocketGivesTheAgentUnreachableError() throws Exception {
        add("client_ed25519");
        TestSshServer server = server(List.of(publicKey("client_ed25519")));
        Path missing = directory.resolve("no-agent-here.sock");
        try (SshRun run = run(missing)) {
            assertThatThrownBy(() -> run.execute(withoutKey(server, "studio-06"), Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("studio-06 (127.0.0.1:" + server.port() + "): no ssh.privateKey configured"
                            + " and the ssh-agent is unreachable: cannot connect to SSH_AUTH_SOCK " + missing);
        }
        assertThat(server.connections()).isZero();
    }

    @Test
    void anAgentThatNeverAnswersCostsTheConnectTimeoutOnly() throws Exception {
        // A hand-made "agent" that accepts the connection and then says nothing, as a stuck agent would.
        Path stuck = directory.resolve("stuck.sock");
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(stuck));
            List<SocketChannel> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
            Thread.ofVirtual().start(() -> {
                try {
                    accepted.add(listener.accept());
                } catch (IOException closed) {
                    // The test is over.
                }
            });
            TestSshServer server = server(List.of(publicKey("client_ed25519")));
            SshSettings settings = SshSettings.defaults("test").withAcceptNewHostKeys(true)
                    .withLimits(new ExecutionLimits(Duration.ofMillis(500), Duration.ofSeconds(5), 64 * 1024))
                    .withEnvironment(Map.of("SSH_AUTH_SOCK", stuck.toString()));
            long start = System.nanoTime();
            try (SshRun run = new SshTransport(settings, hostKeys, audit).openRun()) {
                assertThatThrownBy(() -> run.execute(withoutKey(server, "studio-08"), Command.reading("true")))
                        .isInstanceOf(SshException.AuthenticationFailed.class)
                        .hasMessageContaining("the ssh-agent at " + stuck + " could not list its identities: the ssh-agent at "
                                + stuck + " did not answer within 500 ms while listing identities");
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
            assertThat(server.connections()).isZero();
            for (SocketChannel channel : accepted) {
                channel.close();
            }
        }
    }

    /** A hand-made agent that reads one request and sends a fixed answer (uint32 length + body). */
    private Path fakeAgent(ServerSocketChannel listener, String name, byte[] body) throws IOException {
        Path path = directory.resolve(name);
        listener.bind(UnixDomainSocketAddress.of(path));
        Thread.ofVirtual().start(() -> {
            try (SocketChannel client = listener.accept()) {
                client.read(java.nio.ByteBuffer.allocate(1024));
                java.nio.ByteBuffer answer = java.nio.ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).flip();
                while (answer.hasRemaining()) {
                    client.write(answer);
                }
                client.read(java.nio.ByteBuffer.allocate(1)); // until the client hangs up
            } catch (IOException closed) {
                // The test is over.
            }
        });
        return path;
    }

    @Test
    void anAgentFailureOrAMalformedAnswerIsAClearError() throws Exception {
        try (ServerSocketChannel refusing = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
             ServerSocketChannel truncated = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            Path refusingPath = fakeAgent(refusing, "refusing.sock", new byte[]{SshAgentClient.SSH_AGENT_FAILURE});
            // Announces one identity, then ends: the key blob's length points past the message.
            Path truncatedPath = fakeAgent(truncated, "truncated.sock",
                    new byte[]{SshAgentClient.SSH_AGENT_IDENTITIES_ANSWER, 0, 0, 0, 1, 0, 0, 0, 50, 1, 2});
            try (SshAgentClient client = SshAgentClient.connect(refusingPath, Duration.ofSeconds(5))) {
                assertThatThrownBy(client::identities).isInstanceOf(IOException.class)
                        .hasMessage("the ssh-agent at " + refusingPath + " refused listing identities");
            }
            try (SshAgentClient client = SshAgentClient.connect(truncatedPath, Duration.ofSeconds(5))) {
                assertThatThrownBy(client::identities).isInstanceOf(IOException.class)
                        .hasMessage("the ssh-agent at " + truncatedPath + " sent a malformed identity list:"
                                + " truncated ssh-agent message");
            }
        }
    }

    @Test
    void anAgentThatWillNotSignIsReportedAsSuch() throws Exception {
        add("client_ed25519", "-c");
        TestSshServer server = server(List.of(publicKey("client_ed25519")));
        try (SshRun run = run(socket)) {
            assertThatThrownBy(() -> run.execute(withoutKey(server, "studio-09"), Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("studio-09 (127.0.0.1:" + server.port() + "): user admin: the ssh-agent did not"
                            + " sign with ssh-ed25519 SHA256:")
                    .hasMessageContaining("the ssh-agent at " + socket + " refused signing with ssh-ed25519");
        }
        assertThat(server.received()).isEmpty();
    }

    @Test
    void aConfiguredKeyWinsOverTheAgent() throws Exception {
        // The agent holds a key the server refuses; the configured one is accepted, so it must be the one used.
        add("client_rsa");
        TestSshServer server = server(List.of(publicKey("client_ed25519")));
        try (SshRun run = run(socket)) {
            assertThat(run.execute(server.target("studio-07"), Command.reading("true")).stdout()).isEqualTo("ok");
        }
    }
}
