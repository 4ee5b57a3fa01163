package io.macfleet.ssh;

import io.macfleet.audit.AuditEvent;
import io.macfleet.secrets.SecretReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SshExecutionTest {

    private final List<TestSshServer> servers = new ArrayList<>();
    private final InMemoryAuditLog audit = new InMemoryAuditLog();
    private final InMemoryHostKeyStore hostKeys = new InMemoryHostKeyStore();
    private final ExecutionLimits limits = new ExecutionLimits(Duration.ofSeconds(5), Duration.ofSeconds(5), 64 * 1024);

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

    private SshTransport transport() {
        return transport(SshSettings.defaults("cli:test").withAcceptNewHostKeys(true).withLimits(limits));
    }

    private SshTransport transport(SshSettings settings) {
        return new SshTransport(settings, hostKeys, audit);
    }

    @Test
    void aHungMachineTimesOutInItsOwnSlotWhileTheOthersInTheRunFinish() throws IOException {
        List<SshTarget> targets = new ArrayList<>();
        for (int index = 1; index <= 4; index++) {
            String name = "studio-0" + index;
            TestSshServer.Behaviour behaviour = switch (index) {
                case 2 -> TestSshServer.hang();
                case 3 -> exec -> {
                    // Slow, but within the timeout: must not be cut off.
                    Thread.sleep(300);
                    exec.print(name);
                    return 0;
                };
                default -> TestSshServer.answer(name, 0);
            };
            targets.add(server(behaviour).target(name));
        }
        SshTransport transport = transport(SshSettings.defaults("cli:test").withAcceptNewHostKeys(true)
                .withLimits(limits.withCommandTimeout(Duration.ofMillis(700))).withParallelism(2));

        long start = System.nanoTime();
        List<MachineResult<String>> results = transport.onFleet(targets,
                machine -> machine.execute(Command.reading("hostname")).requireSuccess().stdout());
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(results).extracting(MachineResult::machine)
                .containsExactly("studio-01", "studio-02", "studio-03", "studio-04");
        assertThat(results.get(1).error()).isInstanceOf(SshException.Timeout.class)
                .hasMessageStartingWith("studio-02 (127.0.0.1:")
                .hasMessageContaining("`hostname` did not finish within the command timeout of 700 ms");
        for (int index : new int[] {0, 2, 3}) {
            assertThat(results.get(index).succeeded()).as(results.get(index).describe()).isTrue();
            assertThat(results.get(index).value()).isEqualTo(results.get(index).machine());
        }
        // The hung machine costs its own time slot once: not a retry, not the whole run.
        assertThat(results.get(1).duration()).isGreaterThanOrEqualTo(Duration.ofMillis(700));
        assertThat(elapsed).isLessThan(Duration.ofSeconds(4));
        assertThat(servers.get(1).received()).hasSize(1);
    }

    @Test
    void outputBeyondTheCapIsCutTheChannelClosedAndTheConnectionStaysUsable() throws IOException {
        byte[] chunk = "0123456789abcdef".repeat(512).getBytes(StandardCharsets.UTF_8);
        TestSshServer server = server(exec -> {
            if (exec.commandLine().equals("cat")) {
                for (int written = 0; written < 4 * 1024 * 1024 && !exec.channel().isClosing(); written += chunk.length) {
                    exec.stdout().write(chunk);
                    exec.stdout().flush();
                }
                return 0;
            }
            exec.print("small");
            return 0;
        });
        SshTarget target = server.target("studio-03");
        try (SshRun run = transport().openRun()) {
            CommandResult result = run.execute(target, Command.reading("cat"), limits.withMaxOutputBytes(100_000));
            assertThat(result.stdoutTruncated()).isTrue();
            assertThat(result.stderrTruncated()).isFalse();
            assertThat(result.stdout()).hasSize(100_000);
            assertThat(result.succeeded()).isFalse();
            assertThatThrownBy(result::requireSuccess).isInstanceOf(SshException.OutputCapExceeded.class)
                    .hasMessageContaining("studio-03").hasMessageContaining("`cat` wrote more than the output cap (stdout)");

            assertThat(run.execute(target, Command.reading("echo")).stdout()).isEqualTo("small");
        }
        assertThat(server.connections()).isEqualTo(1);
        assertThat(audit.events("ssh.exec").getFirst().detail()).contains("output truncated at 100000 bytes");
    }

    @Test
    void aHostileArgumentArrivesAsOneLiteralWordWhenAShellParsesIt() throws IOException {
        // The server runs what it receives through a real /bin/sh, with `printargs` defined as a function
        // printing each of its arguments; PATH points nowhere, so a quoting bug could not run `rm`.
        Path emptyDirectory = Files.createTempDirectory("macfleet-quoting");
        TestSshServer server = server(exec -> {
            ProcessBuilder shell = new ProcessBuilder("/bin/sh", "-c",
                    "printargs() { for a in \"$@\"; do printf '<%s>\\n' \"$a\"; done; }; " + exec.commandLine())
                    .directory(emptyDirectory.toFile()).redirectErrorStream(true);
            shell.environment().clear();
            shell.environment().put("PATH", "/nonexistent");
            shell.environment().put("HOME", emptyDirectory.toString());
            Process process = shell.start();
            ByteArrayOutputStream output = new ByteArrayOutputStream();
            process.getInputStream().transferTo(output);
            process.waitFor(5, TimeUnit.SECONDS);
            exec.print(output.toString(StandardCharsets.UTF_8));
            return process.exitValue();
        });
        String hostile = "'; rm -rf / #";
        try (SshRun run = transport().openRun()) {
            CommandResult result = run.execute(server.target("studio-04"),
                    Command.of("printargs", hostile, "$(id)", "a b", "", "\"x\"\n`y`\\z"));
            assertThat(result.stdout()).isEqualTo("<" + hostile + ">\n<$(id)>\n<a b>\n<>\n<\"x\"\n`y`\\z>\n");
            assertThat(result.exitStatus()).isZero();
        }
        assertThat(server.received()).containsExactly(
                "printargs ''\\''; rm -rf / #' '$(id)' 'a b' '' '\"x\"\n`y`\\z'");
    }

    @Test
    void sudoIsRefusedBeforeSendingForProgramsOffTheAllowList() throws IOException {
        TestSshServer server = server(TestSshServer.answer("", 0));
        SshTarget target = server.target("studio-05");
        try (SshRun run = transport().openRun()) {
            assertThatThrownBy(() -> run.execute(target, Command.builder("/bin/rm").arguments("-rf", "/tmp/x").sudo().build()))
                    .isInstanceOf(SshException.SudoNotAllowed.class)
                    .hasMessageContaining("studio-05")
                    .hasMessageContaining("/bin/rm is not on the sudo allow-list");
            assertThat(server.received()).isEmpty();

            run.execute(target, Command.sudo(PrivilegedProgram.PROFILES, "status", "-type", "bootstraptoken"));
        }
        assertThat(server.received()).containsExactly("sudo -n -- /usr/bin/profiles status -type bootstraptoken");
        assertThat(audit.events("ssh.exec")).extracting(AuditEvent::outcome, AuditEvent::detail).containsExactly(
                org.assertj.core.groups.Tuple.tuple(AuditEvent.Outcome.FAILURE,
                        "sudo -n -- /bin/rm -rf /tmp/x [refused: not on the sudo allow-list]"),
                org.assertj.core.groups.Tuple.tuple(AuditEvent.Outcome.SUCCESS,
                        audit.events("ssh.exec").get(1).detail()));
        assertThat(audit.events("ssh.exec").get(1).detail())
                .matches("sudo -n -- /usr/bin/profiles status -type bootstraptoken \\[exit 0, \\d+ ms]");
    }

    /** Drops the connection mid-output on the first exec it receives, answers normally afterwards. */
    private static TestSshServer.Behaviour dropFirstThenAnswer(AtomicInteger calls) {
        return exec -> {
            if (calls.incrementAndGet() == 1) {
                exec.print("Hardware:\n  partial");
                Thread.sleep(50);
                exec.dropConnection();
                return 0;
            }
            exec.print("complete");
            return 0;
        };
    }

    @Test
    void anIdempotentCommandIsSentAgainOnceAfterADroppedConnection() throws IOException {
        TestSshServer server = server(dropFirstThenAnswer(new AtomicInteger()));
        try (SshRun run = transport().openRun()) {
            CommandResult result = run.execute(server.target("studio-06"), Command.reading("system_profiler", "SPHardwareDataType"));
            assertThat(result.stdout()).isEqualTo("complete");
            assertThat(result.attempts()).isEqualTo(2);
        }
        assertThat(server.received()).hasSize(2);
        assertThat(server.connections()).isEqualTo(2);
        assertThat(audit.events("ssh.exec")).extracting(AuditEvent::outcome)
                .containsExactly(AuditEvent.Outcome.FAILURE, AuditEvent.Outcome.SUCCESS);
        assertThat(audit.events("ssh.exec").get(0).detail()).contains("[connection dropped");
        assertThat(audit.events("ssh.exec").get(1).detail()).contains("attempt 2");
    }

    @Test
    void aNonIdempotentCommandIsNeverSentAgainAndTheDropIsReported() throws IOException {
        TestSshServer server = server(dropFirstThenAnswer(new AtomicInteger()));
        try (SshRun run = transport().openRun()) {
            assertThatThrownBy(() -> run.execute(server.target("studio-07"), Command.of("softwareupdate", "--install", "--all")))
                    .isInstanceOfSatisfying(SshException.ConnectionDropped.class,
                            dropped -> assertThat(dropped.commandSent()).isTrue())
                    .hasMessageStartingWith("studio-07 (127.0.0.1:")
                    .hasMessageContaining("connection dropped while `softwareupdate --install --all` ran")
                    .hasMessageContaining("not sent again: the command is not marked idempotent");
        }
        assertThat(server.received()).hasSize(1);
    }

    @Test
    void aPassphraseProtectedKeyIsDecryptedWithTheReferencedPassphrase() throws IOException {
        TestSshServer server = server(TestSshServer.answer("ok", 0));
        SshTarget target = new SshTarget("studio-08", "127.0.0.1", server.port(), TestSshServer.USER,
                TestSshServer.TestKeys.ED25519_PROTECTED, SecretReference.of("env:MACFLEET_STUDIO_KEY_PASSPHRASE"), null);
        SshSettings settings = SshSettings.defaults("cli:test").withAcceptNewHostKeys(true).withLimits(limits);

        try (SshRun run = transport(settings.withEnvironment(
                Map.of("MACFLEET_STUDIO_KEY_PASSPHRASE", TestSshServer.TestKeys.PASSPHRASE))).openRun()) {
            assertThat(run.execute(target, Command.reading("true")).stdout()).isEqualTo("ok");
        }
        // A passphrase file written with `echo` ends with a line break that is not part of the passphrase.
        Path passphraseFile = Files.createTempFile("macfleet-passphrase", "");
        Files.writeString(passphraseFile, TestSshServer.TestKeys.PASSPHRASE + "\n");
        try (SshRun run = transport(settings).openRun()) {
            SshTarget fromFile = target.withPassphrase(SecretReference.of("file:" + passphraseFile));
            assertThat(run.execute(fromFile, Command.reading("true")).stdout()).isEqualTo("ok");
        } finally {
            Files.delete(passphraseFile);
        }
        try (SshRun run = transport(settings.withEnvironment(Map.of("MACFLEET_STUDIO_KEY_PASSPHRASE", "wrong horse"))).openRun()) {
            assertThatThrownBy(() -> run.execute(target, Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("studio-08")
                    .hasMessageContaining("cannot read the private key " + TestSshServer.TestKeys.ED25519_PROTECTED)
                    .hasMessageContaining("with the passphrase env:MACFLEET_STUDIO_KEY_PASSPHRASE")
                    .message().doesNotContain("wrong horse");
        }
        try (SshRun run = transport(settings.withEnvironment(Map.of())).openRun()) {
            assertThatThrownBy(() -> run.execute(target, Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("passphrase unavailable: env:MACFLEET_STUDIO_KEY_PASSPHRASE");
        }
        try (SshRun run = transport(settings).openRun()) {
            assertThatThrownBy(() -> run.execute(target.withPassphrase(null), Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("cannot read the private key " + TestSshServer.TestKeys.ED25519_PROTECTED)
                    .hasMessageContaining("set ssh.passphrase");
        }
        assertThat(audit.events()).extracting(AuditEvent::detail)
                .noneMatch(detail -> detail.contains(TestSshServer.TestKeys.PASSPHRASE) || detail.contains("wrong horse"));
    }

    @Test
    void rsaAndEcdsaKeysWorkAndAnUnknownUserIsRefused() throws IOException {
        TestSshServer server = server(TestSshServer.answer("ok", 0));
        try (SshRun run = transport().openRun()) {
            SshTarget rsa = new SshTarget("studio-rsa", "127.0.0.1", server.port(), TestSshServer.USER,
                    TestSshServer.TestKeys.RSA, null, null);
            SshTarget ecdsa = new SshTarget("studio-ecdsa", "127.0.0.1", server.port(), TestSshServer.USER,
                    TestSshServer.TestKeys.ECDSA, null, null);
            assertThat(run.execute(rsa, Command.reading("true")).stdout()).isEqualTo("ok");
            assertThat(run.execute(ecdsa, Command.reading("true")).stdout()).isEqualTo("ok");

            SshTarget stranger = new SshTarget("studio-x", "127.0.0.1", server.port(), "mallory",
                    TestSshServer.TestKeys.ED25519, null, null);
            assertThatThrownBy(() -> run.execute(stranger, Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("studio-x (127.0.0.1:" + server.port() + "): user mallory was not accepted with the key "
                            + TestSshServer.TestKeys.ED25519);
        }
    }

    @Test
    void withoutAKeyAndWithoutSshAuthSockTheMessageSaysSo() {
        SshTarget target = new SshTarget("studio-09", "127.0.0.1", 22, "admin", null, null, null);
        SshSettings settings = SshSettings.defaults("cli:test").withEnvironment(Map.of());
        try (SshRun run = transport(settings).openRun()) {
            assertThatThrownBy(() -> run.execute(target, Command.reading("true")))
                    .isInstanceOf(SshException.AuthenticationFailed.class)
                    .hasMessageContaining("no ssh.privateKey configured and no ssh-agent (SSH_AUTH_SOCK is not set)");
        }
    }

    @Test
    void anExitSignalIsReported() throws IOException {
        TestSshServer server = server(exec -> {
            exec.printError("Killed\n");
            exec.killedBy("KILL");
            return 0;
        });
        try (SshRun run = transport().openRun()) {
            CommandResult result = run.execute(server.target("studio-11"), Command.reading("inference-node"));
            assertThat(result.exitSignal()).isEqualTo("KILL");
            assertThat(result.exitStatus()).isNull();
            assertThat(result.stderr()).isEqualTo("Killed\n");
            assertThatThrownBy(result::requireSuccess).isInstanceOf(SshException.CommandFailed.class)
                    .hasMessageContaining("`inference-node` was killed by signal KILL: Killed");
        }
    }

    @Test
    void theAuditLogHasCommandMachineStatusAndDurationButNoOutput() throws IOException {
        TestSshServer server = server(exec -> {
            exec.print("SECRET-LOOKING OUTPUT");
            exec.printError("stderr text");
            return 1;
        });
        try (SshRun run = transport().openRun()) {
            run.execute(server.target("studio-10"), Command.of("fdesetup", "status"));
        }
        assertThat(audit.events()).extracting(AuditEvent::action).containsExactly("ssh.host-key.record", "ssh.exec");
        assertThat(audit.events("ssh.exec")).singleElement().satisfies(event -> {
            assertThat(event.action()).isEqualTo("ssh.exec");
            assertThat(event.actor()).isEqualTo("cli:test");
            assertThat(event.machine()).isEqualTo("studio-10");
            assertThat(event.outcome()).isEqualTo(AuditEvent.Outcome.FAILURE);
            assertThat(event.detail()).matches("fdesetup status \\[exit 1, \\d+ ms]");
        });
    }
}
