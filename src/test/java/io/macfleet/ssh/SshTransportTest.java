package io.macfleet.ssh;

import io.macfleet.audit.AuditEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SshTransportTest {

    private final List<TestSshServer> servers = new ArrayList<>();
    private final InMemoryAuditLog audit = new InMemoryAuditLog();
    private final InMemoryHostKeyStore hostKeys = new InMemoryHostKeyStore();

    @AfterEach
    void stopServers() throws IOException {
        for (TestSshServer server : servers) {
            server.close();
        }
    }

    private TestSshServer server(TestSshServer.Behaviour behaviour) throws IOException {
        TestSshServer server = TestSshServer.start(behaviour);
        servers.add(server);
        return server;
    }

    private SshTransport transport(boolean acceptNewHostKeys) {
        return transport(SshSettings.defaults("test").withAcceptNewHostKeys(acceptNewHostKeys)
                .withLimits(new ExecutionLimits(Duration.ofSeconds(5), Duration.ofSeconds(5), 64 * 1024)));
    }

    private SshTransport transport(SshSettings settings) {
        return new SshTransport(settings, hostKeys, audit);
    }

    @Test
    void runsACommandAndReportsStatusOutputAndStderr() throws IOException {
        TestSshServer server = server(exec -> {
            exec.print("ProductName:\t\tmacOS\nProductVersion:\t\t26.2\n");
            exec.printError("warning: something\n");
            return 3;
        });
        try (SshRun run = transport(true).openRun()) {
            CommandResult result = run.execute(server.target("studio-01"), Command.reading("sw_vers"));
            assertThat(result.machine()).isEqualTo("studio-01");
            assertThat(result.exitStatus()).isEqualTo(3);
            assertThat(result.exitSignal()).isNull();
            assertThat(result.stdout()).contains("ProductVersion:\t\t26.2");
            assertThat(result.stderr()).isEqualTo("warning: something\n");
            assertThat(result.truncated()).isFalse();
            assertThat(result.attempts()).isEqualTo(1);
            assertThat(result.succeeded()).isFalse();
            assertThatThrownBy(result::requireSuccess).isInstanceOf(SshException.CommandFailed.class)
                    .hasMessageContaining("studio-01 (127.0.0.1:" + server.port() + ")")
                    .hasMessageContaining("exited with status 3: warning: something");
        }
        assertThat(server.received()).containsExactly("sw_vers");
    }

    @Test
    void unknownHostKeyIsRefusedUnlessAllowedThenRecordedAndAccepted() throws IOException {
        TestSshServer server = server(TestSshServer.answer("ok", 0));
        SshTarget target = server.target("studio-01");

        try (SshRun run = transport(false).openRun()) {
            assertThatThrownBy(() -> run.execute(target, Command.reading("true")))
                    .isInstanceOfSatisfying(SshException.HostKeyNotTrusted.class,
                            refused -> assertThat(refused.presentedFingerprint()).isEqualTo(server.hostKeyFingerprint()))
                    .hasMessageContaining("studio-01")
                    .hasMessageContaining(server.hostKeyFingerprint())
                    .hasMessageContaining("--accept-new-host-keys");
        }
        assertThat(hostKeys.find("studio-01")).isEmpty();
        assertThat(server.received()).isEmpty();

        try (SshRun run = transport(true).openRun()) {
            assertThat(run.execute(target, Command.reading("true")).stdout()).isEqualTo("ok");
        }
        assertThat(hostKeys.find("studio-01")).get().extracting(StoredHostKey::fingerprint)
                .isEqualTo(server.hostKeyFingerprint());
        assertThat(audit.events("ssh.host-key.record")).singleElement()
                .extracting(AuditEvent::detail).asString().contains(server.hostKeyFingerprint());

        // Once recorded, the key is accepted without permission to record new ones.
        try (SshRun run = transport(false).openRun()) {
            assertThat(run.execute(target, Command.reading("true")).exitStatus()).isZero();
        }
    }

    @Test
    void changedHostKeyIsRefusedWithBothFingerprintsEvenWhenNewKeysMayBeRecorded() throws IOException {
        TestSshServer server = server(TestSshServer.answer("ok", 0));
        SshTarget target = server.target("studio-07");
        try (SshRun run = transport(true).openRun()) {
            run.execute(target, Command.reading("true"));
        }
        String recorded = server.hostKeyFingerprint();
        server.changeHostKey();
        String presented = server.hostKeyFingerprint();
        assertThat(presented).isNotEqualTo(recorded);

        try (SshRun run = transport(true).openRun()) {
            assertThatThrownBy(() -> run.execute(target, Command.reading("true")))
                    .isInstanceOfSatisfying(SshException.HostKeyChanged.class, changed -> {
                        assertThat(changed.expectedFingerprint()).isEqualTo(recorded);
                        assertThat(changed.presentedFingerprint()).isEqualTo(presented);
                    })
                    .hasMessageContaining("studio-07 (127.0.0.1:" + server.port() + ")")
                    .hasMessageContaining(recorded)
                    .hasMessageContaining(presented)
                    .hasMessageContaining("macfleet ssh forget-host-key studio-07");
        }
        assertThat(hostKeys.find("studio-07")).get().extracting(StoredHostKey::fingerprint).isEqualTo(recorded);
        assertThat(server.received()).hasSize(1);

        // The documented way out: forget the old key, then allow recording the new one.
        assertThat(transport(false).forgetHostKey("studio-07")).isTrue();
        try (SshRun run = transport(true).openRun()) {
            assertThat(run.execute(target, Command.reading("true")).exitStatus()).isZero();
        }
        assertThat(hostKeys.find("studio-07")).get().extracting(StoredHostKey::fingerprint).isEqualTo(presented);
    }

    @Test
    void inventoryPinnedKeyIsAcceptedWithoutRecordingAndAMismatchIsRefused() throws IOException {
        TestSshServer server = server(TestSshServer.answer("ok", 0));
        SshTarget pinned = server.target("studio-02").withPinnedHostKey(server.hostKeyFingerprint());
        try (SshRun run = transport(false).openRun()) {
            assertThat(run.execute(pinned, Command.reading("true")).exitStatus()).isZero();
        }
        assertThat(hostKeys.find("studio-02")).isEmpty();

        String inventoryPin = server.hostKeyFingerprint();
        server.changeHostKey();
        try (SshRun run = transport(true).openRun()) {
            assertThatThrownBy(() -> run.execute(pinned, Command.reading("true")))
                    .isInstanceOf(SshException.HostKeyChanged.class)
                    .hasMessageContaining(inventoryPin)
                    .hasMessageContaining(server.hostKeyFingerprint())
                    .hasMessageContaining("ssh.hostKey");
        }
    }

    @Test
    void anUnreachableMachineIsReportedAsSuch() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        SshTarget target = new SshTarget("studio-99", "127.0.0.1", closedPort, "admin",
                TestSshServer.TestKeys.ED25519, null, null);
        try (SshRun run = transport(true).openRun()) {
            assertThatThrownBy(() -> run.execute(target, Command.reading("true")))
                    .isInstanceOf(SshException.Unreachable.class)
                    .hasMessageStartingWith("studio-99 (127.0.0.1:" + closedPort + "): unreachable: connection refused");
        }
    }
}
