package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import net.schmizz.sshj.SSHClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * startosinstall over SSH as on an Apple-silicon Mac (refused without a volume owner's password on standard input,
 * then prepares and restarts into the new release), and the volume-owner check a caller makes first.
 */
class UpdateProgramsTest {
    private static final String STARTOSINSTALL = "'/Applications/Install macOS Tahoe.app/Contents/Resources/startosinstall'";

    @TempDir
    static Path state;
    static KeyPair key;
    static SimulatedFleet fleet;

    @BeforeAll
    static void startFleet() {
        TestSupport.quietSshLogs();
        key = SshKeys.generate();
        fleet = SimulatedFleet.builder(state).authorizedKey(key.getPublic()).rebootDuration(Duration.ofMillis(300)).latestRelease("26.3")
                .macStudio("studio-01", 512, "26.1").macStudio("studio-02", 512, "26.3").macStudio("studio-03", 256, "26.1").build().start();
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    private static SshClient.Answer run(String machine, String command, String stdin) throws IOException {
        try (SSHClient client = SshClient.connect(fleet.endpoint(machine), "admin", key)) {
            return SshClient.exec(client, command, stdin);
        }
    }

    private static boolean reachable(String machine) {
        try {
            return SshClient.exec(fleet, machine, key, "true").exitCode() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void startosinstallRefusesWithoutAVolumeOwnersPasswordOnStandardInput() throws Exception {
        SshClient.Answer notRoot = run("studio-03", STARTOSINSTALL + " --agreetolicense --user admin --stdinpass", "");
        assertThat(notRoot.exitCode()).isEqualTo(1);

        SshClient.Answer noCredentials = run("studio-03", "sudo -n " + STARTOSINSTALL + " --agreetolicense --forcequitapps", "");
        assertThat(noCredentials.exitCode()).isNotZero();
        assertThat(noCredentials.stderr()).isEqualTo(UpdatePrograms.STARTOSINSTALL_UNAUTHORIZED);
        assertThat(noCredentials.stdout()).startsWith("By using the agreetolicense option");

        SshClient.Answer wrong = run("studio-03", "sudo -n " + STARTOSINSTALL + " --agreetolicense --forcequitapps --user admin --stdinpass", "wrong\n");
        assertThat(wrong.stderr()).isEqualTo(UpdatePrograms.STARTOSINSTALL_UNAUTHORIZED);

        SshClient.Answer inArgv = run("studio-03", "sudo -n " + STARTOSINSTALL + " --agreetolicense --user admin --password macfleet-demo", "");
        assertThat(inArgv.exitCode()).isEqualTo(1);
        assertThat(inArgv.stderr()).contains("unrecognized option --password");

        SshClient.Answer noLicense = run("studio-03", "sudo -n " + STARTOSINSTALL + " --user admin --stdinpass", "");
        assertThat(noLicense.stderr()).contains("--agreetolicense");
        assertThat(run("studio-03", "sw_vers -productVersion", "").stdout()).isEqualTo("26.1\n");
    }

    @Test
    void startosinstallWithTheOwnersPasswordPreparesAndRestartsIntoTheNewestRelease() throws Exception {
        SshClient.Answer upToDate = run("studio-02", "sudo -n " + STARTOSINSTALL + " --agreetolicense --user admin --stdinpass", "macfleet-demo\n");
        assertThat(upToDate.exitCode()).isEqualTo(1);
        assertThat(upToDate.stderr()).contains("cannot install over macOS 26.3");

        SshClient.Answer installed = run("studio-01", "sudo -n " + STARTOSINSTALL + " --agreetolicense --forcequitapps --user admin --stdinpass", "macfleet-demo\n");
        assertThat(installed.exitCode()).isZero();
        assertThat(installed.stdout()).contains("Preparing to run macOS Installer...\n", "Preparing: 100.0\n", "System going down for install\n");
        assertThat(TestSupport.await(Duration.ofSeconds(3), () -> fleet.machine("studio-01").power() == PowerState.REBOOTING)).isTrue();
        assertThat(TestSupport.await(Duration.ofSeconds(10), () -> reachable("studio-01"))).isTrue();
        assertThat(run("studio-01", "sw_vers", "").stdout()).isEqualTo("ProductName:\t\tmacOS\nProductVersion:\t\t26.3\nBuildVersion:\t\t25D125\n");
    }

    @Test
    void theVolumeOwnerCheckFindsTheAccountsGeneratedUidAmongTheCryptoUsers() throws Exception {
        String uid = run("studio-02", "dscl . -read /Users/admin GeneratedUID", "").stdout().replace("GeneratedUID: ", "").strip();
        assertThat(uid).matches("[0-9A-F-]{36}");
        String users = run("studio-02", "diskutil apfs listCryptoUsers /", "").stdout();
        assertThat(users).startsWith("Cryptographic users for disk3s1s1 (2 found)\n|\n+-- " + uid + "\n|   Type: Local Open Directory User\n|   Volume Owner: Yes\n")
                .contains("Type: Personal Recovery User").doesNotContain("Bootstrap Token");

        fleet.machine("studio-02").setBootstrapTokenEscrowed(true);
        assertThat(run("studio-02", "diskutil apfs listCryptoUsers /", "").stdout()).startsWith("Cryptographic users for disk3s1s1 (3 found)")
                .contains("    Type: MDM Bootstrap Token External Key\n");
        fleet.machine("studio-02").setBootstrapTokenEscrowed(false);

        SshClient.Answer nobody = run("studio-02", "dscl . -read /Users/nobody-here GeneratedUID", "");
        assertThat(nobody.exitCode()).isEqualTo(56);
        assertThat(nobody.stderr()).contains("eDSRecordNotFound");
    }
}
