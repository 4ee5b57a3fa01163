package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.transport.verification.HostKeyVerifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reboots, Recovery and every injected fault, observed through real SSH connections. */
class FaultsAndPowerTest {
    @TempDir
    static Path state;
    static KeyPair key;
    static SimulatedFleet fleet;

    @BeforeAll
    static void startFleet() {
        TestSupport.quietSshLogs();
        key = SshKeys.generate();
        fleet = SimulatedFleet.builder(state).authorizedKey(key.getPublic()).rebootDuration(Duration.ofMillis(800))
                .macStudio("studio-01", 512, "26.2").macStudio("studio-02", 512, "26.2").macStudio("studio-03", 256, "26.2")
                .build().start();
        fleet.cabling().plug("studio-01:1", "studio-02:1", LinkSpeed.TB5);
        fleet.cabling().plug("studio-01:2", "studio-03:1", LinkSpeed.TB5);
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    @AfterEach
    void clearFaults() {
        for (SimulatedMac mac : fleet.machines()) {
            fleet.powerOn(mac.name());
            fleet.inject(FaultStep.machine(mac.name(), "clear"));
        }
    }

    private static SshClient.Answer run(String machine, String command) throws IOException {
        return SshClient.exec(fleet, machine, key, command);
    }

    private static boolean reachable(String machine) {
        try {
            return run(machine, "true").exitCode() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void wedgedRdmaHangsIbvDevinfoAndCrashLoopsTheDaemonsUntilTheMachineReboots() throws Exception {
        Files.createDirectories(fleet.machine("studio-02").resolve("/Library/LaunchDaemons"));
        Files.writeString(fleet.machine("studio-02").resolve("/Library/LaunchDaemons/io.macfleet.sleeper.plist"), """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>Label</key><string>io.macfleet.sleeper</string>
                <key>ProgramArguments</key><array><string>/bin/sleep</string><string>600</string></array>
                <key>KeepAlive</key><true/><key>ThrottleInterval</key><integer>1</integer>
                <key>StandardErrorPath</key><string>/var/log/macfleet/sleeper.err.log</string></dict></plist>
                """);
        assertThat(run("studio-02", "sudo -n launchctl bootstrap system /Library/LaunchDaemons/io.macfleet.sleeper.plist").exitCode()).isZero();
        assertThat(fleet.inject(FaultStep.machine("studio-02", "wedge-rdma"))).isEqualTo("wedge-rdma on studio-02");
        // On a thread of its own: in the common pool it would block the worker that completes Process.onExit (launchd's respawns).
        java.util.concurrent.CompletableFuture<SshClient.Answer> devinfo = new java.util.concurrent.CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                devinfo.complete(run("studio-02", "ibv_devinfo"));
            } catch (IOException e) {
                devinfo.complete(null);
            }
        });
        Thread.sleep(1500);
        assertThat(devinfo).as("ibv_devinfo hangs while RDMA is wedged").isNotDone();
        Path log = fleet.machine("studio-02").resolve("/var/log/macfleet/sleeper.err.log");
        assertThat(TestSupport.await(Duration.ofSeconds(10), () -> {
            try {
                return Files.readString(log).contains("[jaccl] Changing queue pair to RTR failed with errno 22");
            } catch (IOException e) {
                return false;
            }
        })).as(() -> {
            try {
                return "log: " + (Files.exists(log) ? Files.readString(log) : "(none)") + "; launchd: "
                        + fleet.machine("studio-02").launchd().print("io.macfleet.sleeper").orElse("(not loaded)");
            } catch (IOException e) {
                return e.toString();
            }
        }).isTrue();
        try {
            run("studio-02", "sudo -n shutdown -r now");
        } catch (IOException e) {
            // The connection may end with the machine before the exit status is read; the reboot was ordered.
        }
        assertThat(TestSupport.await(Duration.ofSeconds(3), () -> fleet.machine("studio-02").power() != PowerState.ON
                || fleet.machine("studio-02").faults().rdmaWedged() == false)).isTrue();
        assertThat(TestSupport.await(Duration.ofSeconds(10), () -> reachable("studio-02") && fleet.machine("studio-02").power() == PowerState.ON)).isTrue();
        // It answers again: the devices, or "No IB devices found" when an earlier test left RDMA off on this Mac.
        assertThat(run("studio-02", "ibv_devinfo").exitCode()).isIn(0, 255);
        assertThat(fleet.machine("studio-02").faults().rdmaWedged()).isFalse();
        // The daemon came back at boot as itself, not as the failing stand-in.
        assertThat(TestSupport.await(Duration.ofSeconds(5), () -> fleet.machine("studio-02").launchd().pid("io.macfleet.sleeper")
                .flatMap(pid -> ProcessHandle.of(pid)).flatMap(handle -> handle.info().command()).map(command -> command.endsWith("sleep"))
                .orElse(false))).isTrue();
        run("studio-02", "sudo -n launchctl bootout system/io.macfleet.sleeper");
    }

    @Test
    void rebootTakesSshAwayForAWhileAndBringsItBack() throws Exception {
        SshClient.Answer answer = run("studio-03", "sudo -n shutdown -r now");
        assertThat(answer.stdout()).isEqualTo("Shutdown NOW!\n");
        assertThat(answer.exitCode()).isZero();
        assertThat(TestSupport.await(Duration.ofSeconds(2), () -> fleet.machine("studio-03").power() == PowerState.REBOOTING)).isTrue();
        assertThat(reachable("studio-03")).isFalse();
        assertThat(TestSupport.await(Duration.ofSeconds(5), () -> reachable("studio-03"))).isTrue();
        assertThat(run("studio-03", "shutdown -r now").stderr()).isEqualTo("shutdown: NOT super-user\n");
    }

    @Test
    void aRebootThatNeverComesBackNeedsThePowerButton() throws Exception {
        fleet.inject(FaultStep.machine("studio-03", "reboot-never-returns"));
        run("studio-03", "sudo -n reboot");
        Thread.sleep(2000);
        assertThat(fleet.machine("studio-03").power()).isEqualTo(PowerState.REBOOTING);
        assertThat(reachable("studio-03")).isFalse();
        fleet.powerOn("studio-03");
        assertThat(reachable("studio-03")).isTrue();
    }

    @Test
    void rdmaCanBeEnabledOnlyInRecoveryAndTakesEffectAfterTheReboot() throws Exception {
        assertThat(run("studio-02", "sudo -n rdma_ctl enable").exitCode()).isEqualTo(77);
        assertThatThrownBy(() -> fleet.recoveryConsole("studio-02", "rdma_ctl enable"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not in Recovery");

        fleet.enterRecovery("studio-02");
        assertThat(reachable("studio-02")).isFalse();
        assertThat(fleet.recoveryConsole("studio-02", "rdma_ctl enable").exitCode()).isZero();
        assertThat(fleet.machine("studio-02").snapshot().rdmaEnabled()).as("not before the reboot").isFalse();
        assertThat(fleet.recoveryConsole("studio-02", "nonsense").output()).contains("command not found");

        fleet.recoveryConsole("studio-02", "reboot");
        assertThat(TestSupport.await(Duration.ofSeconds(5), () -> reachable("studio-02"))).isTrue();
        assertThat(run("studio-02", "rdma_ctl status").stdout()).isEqualTo("enabled\n");
        assertThat(run("studio-02", "ibv_devinfo -d rdma_en2").stdout()).contains("PORT_DOWN (1)");
        fleet.machine("studio-01").setRdmaEnabled(true);
        assertThat(run("studio-02", "ibv_devinfo -d rdma_en2").stdout()).contains("state:\t\t\tPORT_ACTIVE (4)");
        fleet.machine("studio-01").setRdmaEnabled(false);
    }

    @Test
    void aHungMacAcceptsTheCommandAndNeverAnswers() throws Exception {
        fleet.inject(FaultStep.machine("studio-01", "hang"));
        try (SSHClient client = SshClient.connect(fleet.endpoint("studio-01"), "admin", key);
             Session session = client.startSession()) {
            Session.Command command = session.exec("sw_vers");
            try {
                command.join(1, TimeUnit.SECONDS);
            } catch (IOException timeout) {
                // SSHJ reports the timeout as an exception; either way no answer came.
            }
            assertThat(command.getExitStatus()).isNull();
            assertThat(command.getInputStream().available()).isZero();
        }
    }

    @Test
    void aWedgedSshdAcceptsTcpButNeverSendsItsBanner() throws Exception {
        fleet.inject(FaultStep.machine("studio-03", "hang-connect"));
        SimulatedFleet.Endpoint endpoint = fleet.endpoint("studio-03");
        try (java.net.Socket socket = new java.net.Socket(endpoint.host(), endpoint.port())) {
            socket.setSoTimeout(700);
            assertThatThrownBy(() -> socket.getInputStream().read()).isInstanceOf(java.net.SocketTimeoutException.class);
        }
        fleet.inject(FaultStep.machine("studio-03", "clear"));
        assertThat(run("studio-03", "hostname").stdout()).isEqualTo("studio-03\n");
    }

    @Test
    void aSlowMacAnswersLate() throws Exception {
        fleet.inject(new FaultStep("studio-01", null, "slow", 700L, null, null, null));
        long start = System.nanoTime();
        assertThat(run("studio-01", "sw_vers -productVersion").stdout()).isEqualTo("26.2\n");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(700));
    }

    @Test
    void aDroppedConnectionLeavesTheCommandWithoutExitStatus() {
        fleet.inject(FaultStep.machine("studio-01", "drop-connection"));
        SshClient.Answer answer;
        try {
            answer = run("studio-01", "system_profiler SPThunderboltDataType -json");
        } catch (IOException dropped) {
            return;
        }
        assertThat(answer.exitCode()).isNull();
        assertThat(answer.stdout().length()).isLessThan(3000);
    }

    @Test
    void garbageIsNotTheRealOutput() throws Exception {
        fleet.inject(FaultStep.machine("studio-01", "garbage"));
        String output = run("studio-01", "sw_vers").stdout();
        assertThat(output).isNotBlank().doesNotContain("ProductVersion");
    }

    @Test
    void aHostKeyChangeIsVisibleToClientsAndTheKeySurvivesReboots() throws Exception {
        PublicKey before = hostKey("studio-02");
        fleet.reboot("studio-02");
        assertThat(TestSupport.await(Duration.ofSeconds(5), () -> reachable("studio-02"))).isTrue();
        assertThat(hostKey("studio-02")).isEqualTo(before);
        fleet.inject(FaultStep.machine("studio-02", "host-key-change"));
        assertThat(hostKey("studio-02")).isNotEqualTo(before);
    }

    private static PublicKey hostKey(String machine) throws IOException {
        AtomicReference<PublicKey> seen = new AtomicReference<>();
        try (SSHClient client = new SSHClient(new DefaultConfig())) {
            client.addHostKeyVerifier(new HostKeyVerifier() {
                @Override
                public boolean verify(String hostname, int port, PublicKey key) {
                    seen.set(key);
                    return true;
                }

                @Override
                public java.util.List<String> findExistingAlgorithms(String hostname, int port) {
                    return java.util.List.of();
                }
            });
            client.connect(fleet.endpoint(machine).host(), fleet.endpoint(machine).port());
        }
        return seen.get();
    }

    @Test
    void aFullDiskFailsSftpUploads() throws Exception {
        fleet.inject(FaultStep.machine("studio-01", "disk-full"));
        assertThatThrownBy(() -> SshClient.upload(fleet, key, "studio-01", "/usr/local/bin/payload", "hello")).isInstanceOf(IOException.class);
        assertThat(run("studio-01", "df -h /").stdout()).contains("100%");
        fleet.machine("studio-01").faults().clear();
        SshClient.upload(fleet, key, "studio-01", "/usr/local/bin/payload", "hello");
        assertThat(Files.readString(fleet.machine("studio-01").resolve("/usr/local/bin/payload"))).isEqualTo("hello");
        assertThat(run("studio-01", "cat /usr/local/bin/payload").stdout()).isEqualTo("hello");
    }

    @Test
    void cableFaultsShowInSystemProfiler() throws Exception {
        fleet.inject(FaultStep.cable("studio-01:1", "tb4"));
        assertThat(busOfPort("studio-01", 1)).contains("Speed: 40 Gb/s").contains("Device Name: Mac15,14");
        fleet.inject(FaultStep.cable("studio-01:1", "one-sided"));
        assertThat(busOfPort("studio-01", 1)).contains("Device connected");
        assertThat(busOfPort("studio-02", 1)).contains("No device connected");
        fleet.inject(FaultStep.cable("studio-01:1", "unplug"));
        assertThat(busOfPort("studio-01", 1)).contains("No device connected").doesNotContain("Mac15,14");
        fleet.inject(new FaultStep(null, "studio-01:1", "plug", null, null, null, "studio-02:1"));
        fleet.inject(new FaultStep(null, "studio-01:1", "move", null, null, "studio-01:5", null));
        assertThat(busOfPort("studio-01", 1)).contains("No device connected");
        assertThat(busOfPort("studio-01", 5)).contains("Speed: 80 Gb/s");
        fleet.inject(new FaultStep(null, "studio-01:5", "move", null, null, "studio-01:1", null));
        assertThatThrownBy(() -> fleet.inject(FaultStep.machine("studio-09", "hang"))).hasMessageContaining("no simulated Mac named 'studio-09'");
        assertThatThrownBy(() -> fleet.inject(FaultStep.machine("studio-01", "explode"))).hasMessageContaining("unknown fault 'explode'");
    }

    private static String busOfPort(String machine, int port) throws IOException {
        String text = run(machine, "system_profiler SPThunderboltDataType").stdout();
        int start = text.indexOf("Thunderbolt/USB4 Bus " + (port - 1) + ":");
        int end = text.indexOf("Thunderbolt/USB4 Bus ", start + 10);
        return text.substring(start, end < 0 ? text.length() : end);
    }

    @Test
    void aScenarioFileScriptsCablesAndFaults(@TempDir Path directory) throws Exception {
        Path file = directory.resolve("scenario.yaml");
        Files.writeString(file, """
                cables:
                  - {a: studio-02:6, b: studio-03:6, speed: TB4}
                faults:
                  - {machine: studio-03, fault: slow, millis: 300}
                  - {machine: studio-02, fault: garbage}
                """);
        Scenario.load(file).applyTo(fleet);
        assertThat(fleet.cabling().at(PortRef.parse("studio-03:6")).orElseThrow().speed()).isEqualTo(LinkSpeed.TB4);
        assertThat(fleet.machine("studio-03").faults().slowMillis()).isEqualTo(300);
        assertThat(fleet.machine("studio-02").faults().garbage()).isTrue();
        fleet.cabling().unplug(PortRef.parse("studio-02:6"));

        Files.writeString(file, "faults:\n  - {machine: studio-02, fault: hang, colour: red}\n");
        assertThatThrownBy(() -> Scenario.load(file)).isInstanceOf(IOException.class).hasMessageContaining("colour");
    }
}
