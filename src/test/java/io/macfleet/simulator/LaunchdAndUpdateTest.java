package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.Optional;
import net.schmizz.sshj.SSHClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** launchctl with real child processes, KeepAlive and crash loops; softwareupdate's Apple-silicon rule. */
class LaunchdAndUpdateTest {
    private static final String LABEL = "io.macfleet.test-daemon";
    private static final String PLIST = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>Label</key>
                <string>%s</string>
                <key>ProgramArguments</key>
                <array>
                    <string>%s</string>
                    <string>300</string>
                </array>
                <key>KeepAlive</key>
                <true/>
                <key>ThrottleInterval</key>
                <integer>1</integer>
            </dict>
            </plist>
            """;

    @TempDir
    static Path state;
    static KeyPair key;
    static SimulatedFleet fleet;

    @BeforeAll
    static void startFleet() {
        TestSupport.quietSshLogs();
        key = SshKeys.generate();
        fleet = SimulatedFleet.builder(state).authorizedKey(key.getPublic()).rebootDuration(Duration.ofMillis(500))
                .macStudio("studio-01", 512, "26.2").macStudio("studio-04", 256, "26.1").build().start();
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
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
    void bootstrapStartsARealProcessKeepAliveRestartsItBootoutStopsIt() throws Exception {
        Launchd launchd = fleet.machine("studio-01").launchd();
        SshClient.upload(fleet, key, "studio-01", "/Library/LaunchDaemons/" + LABEL + ".plist", PLIST.formatted(LABEL, "/bin/sleep"));

        assertThat(run("studio-01", "launchctl bootstrap system /Library/LaunchDaemons/" + LABEL + ".plist").stderr())
                .isEqualTo("Bootstrap failed: 1: Operation not permitted\n");
        SshClient.Answer bootstrap = run("studio-01", "sudo -n launchctl bootstrap system /Library/LaunchDaemons/" + LABEL + ".plist");
        assertThat(bootstrap.exitCode()).isZero();
        long firstPid = launchd.pid(LABEL).orElseThrow();
        assertThat(ProcessHandle.of(firstPid).map(ProcessHandle::isAlive)).contains(true);
        assertThat(run("studio-01", "launchctl print system/" + LABEL).stdout())
                .contains("system/" + LABEL + " = {", "\tstate = running\n", "\tpid = " + firstPid + "\n");
        assertThat(run("studio-01", "sudo -n launchctl bootstrap system /Library/LaunchDaemons/" + LABEL + ".plist").exitCode()).isEqualTo(5);

        assertThat(fleet.crashDaemon("studio-01", LABEL)).isTrue();
        assertThat(TestSupport.await(Duration.ofSeconds(5),
                () -> launchd.pid(LABEL).filter(pid -> pid != firstPid).isPresent())).as("KeepAlive restart").isTrue();
        long secondPid = launchd.pid(LABEL).orElseThrow();
        assertThat(ProcessHandle.of(firstPid).map(ProcessHandle::isAlive).orElse(false)).isFalse();

        run("studio-01", "sudo -n launchctl kickstart -k system/" + LABEL);
        assertThat(launchd.pid(LABEL)).isPresent().get().isNotEqualTo(secondPid);
        long thirdPid = launchd.pid(LABEL).orElseThrow();

        assertThat(run("studio-01", "sudo -n launchctl bootout system/" + LABEL).exitCode()).isZero();
        assertThat(TestSupport.await(Duration.ofSeconds(3), () -> ProcessHandle.of(thirdPid).map(p -> !p.isAlive()).orElse(true))).isTrue();
        SshClient.Answer print = run("studio-01", "launchctl print system/" + LABEL);
        assertThat(print.exitCode()).isEqualTo(113);
        assertThat(print.stderr()).isEqualTo("Could not find service \"" + LABEL + "\" in domain for system\n");
        Thread.sleep(1500);
        assertThat(launchd.pid(LABEL)).as("no restart after bootout").isEmpty();
    }

    /** UserName (issue 29): launchd runs the daemon as that account, and cannot start it while the Mac has no such account. */
    @Test
    void aDaemonWithAUserNameRunsOnlyWhenTheAccountExists() throws Exception {
        String label = "io.macfleet.test-user-daemon";
        String plist = PLIST.formatted(label, "/bin/sleep").replace("<key>KeepAlive</key>", "<key>UserName</key>\n    <string>_tester</string>\n    <key>KeepAlive</key>");
        SshClient.upload(fleet, key, "studio-04", "/Library/LaunchDaemons/" + label + ".plist", plist);
        Launchd launchd = fleet.machine("studio-04").launchd();
        assertThat(run("studio-04", "sudo -n launchctl bootstrap system /Library/LaunchDaemons/" + label + ".plist").exitCode()).isZero();
        assertThat(launchd.userOf(label)).hasValue("_tester");
        assertThat(launchd.pid(label)).isEmpty();
        assertThat(run("studio-04", "launchctl print system/" + label).stdout()).contains("\tstate = spawn failed\n", "\tlast exit code = 78\n");

        assertThat(run("studio-04", "dscl . -create /Users/_tester UniqueID 401").stderr()).contains("eDSPermissionError");
        assertThat(run("studio-04", "dscl . -read /Users/_tester UniqueID").exitCode()).isEqualTo(56);
        assertThat(run("studio-04", "sudo -n dscl . -create /Users/_tester UniqueID 401").exitCode()).isZero();
        assertThat(run("studio-04", "dscl . -list /Users UniqueID").stdout()).containsPattern("(?m)^_tester +401$");
        assertThat(TestSupport.await(Duration.ofSeconds(5), () -> launchd.pid(label).isPresent())).as("started once the account exists").isTrue();
        assertThat(run("studio-04", "sudo -n launchctl bootout system/" + label).exitCode()).isZero();
    }

    @Test
    void anUploadedScriptRunsAndACrashLoopKeepsRespawningAndDaemonsComeBackAfterReboot() throws Exception {
        String label = "io.macfleet.script-daemon";
        SshClient.upload(fleet, key, "studio-01", "/usr/local/bin/node-agent", "#!/bin/sh\nexec sleep 300\n");
        SshClient.upload(fleet, key, "studio-01", "/Library/LaunchDaemons/" + label + ".plist", PLIST.formatted(label, "/usr/local/bin/node-agent"));
        assertThat(run("studio-01", "sudo -n launchctl bootstrap system /Library/LaunchDaemons/" + label + ".plist").exitCode()).isZero();
        Launchd launchd = fleet.machine("studio-01").launchd();
        assertThat(launchd.pid(label)).isPresent();

        fleet.inject(new FaultStep("studio-01", null, "crash-loop", null, label, null, null));
        assertThat(TestSupport.await(Duration.ofSeconds(6), () -> launchd.runs(label) >= 4)).as("respawned once a second").isTrue();
        fleet.machine("studio-01").faults().clear();
        assertThat(TestSupport.await(Duration.ofSeconds(3), () -> launchd.pid(label).isPresent())).isTrue();

        fleet.reboot("studio-01");
        assertThat(TestSupport.await(Duration.ofSeconds(5), () -> reachable("studio-01"))).isTrue();
        Optional<Long> afterReboot = fleet.machine("studio-01").launchd().pid(label);
        assertThat(afterReboot).as("launchd loads /Library/LaunchDaemons at boot").isPresent();
        run("studio-01", "sudo -n launchctl bootout system/" + label);
    }

    @Test
    void softwareupdateNeedsVolumeOwnerCredentialsOnAppleSilicon() throws Exception {
        assertThat(run("studio-04", "sw_vers -productVersion").stdout()).isEqualTo("26.1\n");
        SshClient.Answer list = run("studio-04", "softwareupdate --list");
        assertThat(list.stdout()).contains("Software Update found the following new or updated software:\n* Label: macOS Tahoe 26.2-25C56\n",
                "\tTitle: macOS Tahoe 26.2, Version: 26.2, Size: ");

        SshClient.Answer withoutCredentials = run("studio-04", "sudo -n softwareupdate --install --all --restart");
        assertThat(withoutCredentials.exitCode()).isEqualTo(1);
        assertThat(withoutCredentials.stderr()).contains("volume owner");

        try (SSHClient client = SshClient.connect(fleet.endpoint("studio-04"), "admin", key)) {
            SshClient.Answer wrong = SshClient.exec(client, "sudo -n softwareupdate --install --all --user admin --stdinpass", "wrong\n");
            assertThat(wrong.exitCode()).isEqualTo(1);
            SshClient.Answer installed = SshClient.exec(client,
                    "sudo -n softwareupdate --install 'macOS Tahoe 26.2-25C56' --agree-to-license --user admin --stdinpass --restart", "macfleet-demo\n");
            assertThat(installed.exitCode()).isZero();
            assertThat(installed.stdout()).contains("Installing macOS Tahoe 26.2");
        }
        assertThat(TestSupport.await(Duration.ofSeconds(3), () -> fleet.machine("studio-04").power() == PowerState.REBOOTING)).isTrue();
        assertThat(TestSupport.await(Duration.ofSeconds(5), () -> reachable("studio-04"))).isTrue();
        assertThat(run("studio-04", "sw_vers").stdout()).isEqualTo("ProductName:\t\tmacOS\nProductVersion:\t\t26.2\nBuildVersion:\t\t25C56\n");
        assertThat(run("studio-04", "softwareupdate -l").stderr()).isEqualTo("No new software available.\n");
    }
}
