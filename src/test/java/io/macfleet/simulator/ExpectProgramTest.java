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
 * The bootstrap token escrow as the provisioning playbook sends it: expect reads the volume owner's name and password
 * from standard input and answers profiles' terminal prompts, so no process argument holds the password.
 */
class ExpectProgramTest {
    /** The script of playbooks/provision.yaml's bootstrap-token-escrowed action. */
    static final String SCRIPT = """
            set timeout 60
            gets stdin user
            gets stdin password
            spawn -noecho /usr/bin/sudo -n /usr/bin/profiles install -type bootstraptoken
            expect "Enter the admin user name:"
            send -- "$user\\r"
            expect "Enter the password for user"
            send -- "$password\\r"
            expect eof
            catch wait result
            exit [lindex $result 3]
            """;

    @TempDir
    static Path state;
    static KeyPair key;
    static SimulatedFleet fleet;

    @BeforeAll
    static void startFleet() {
        TestSupport.quietSshLogs();
        key = SshKeys.generate();
        fleet = SimulatedFleet.builder(state).authorizedKey(key.getPublic()).rebootDuration(Duration.ofMillis(300))
                .volumeOwner("admin", "0wner-Passw0rd").macStudio("studio-01", 512, "26.1").macStudio("studio-02", 512, "26.1").build().start();
        for (SimulatedMac mac : fleet.machines()) {
            mac.setMdmEnrolled(true);
        }
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    private static SshClient.Answer escrow(String machine, String stdin) throws IOException {
        try (SSHClient client = SshClient.connect(fleet.endpoint(machine), "admin", key)) {
            return SshClient.exec(client, "/usr/bin/expect -c '" + SCRIPT.replace("'", "'\\''") + "'", stdin);
        }
    }

    @Test
    void theRightPasswordOnStandardInputEscrowsTheTokenAndNeverAppearsInAnyArgument() throws Exception {
        SshClient.Answer answer = escrow("studio-01", "admin\n0wner-Passw0rd\n");

        assertThat(answer.exitCode()).isZero();
        // The terminal transcript: the user name is echoed, the password is not (profiles turns echo off).
        assertThat(answer.stdout()).isEqualTo("Enter the admin user name: admin\r\nEnter the password for user 'admin': \r\n"
                + "profiles: Checking bootstrap token status...\r\nprofiles: Bootstrap Token escrowed\r\n");
        SimulatedMac mac = fleet.machine("studio-01");
        assertThat(mac.snapshot().bootstrapTokenEscrowed()).isTrue();
        assertThat(mac.processArguments()).contains("/usr/bin/sudo -n /usr/bin/profiles install -type bootstraptoken")
                .noneMatch(arguments -> arguments.contains("0wner-Passw0rd"));
    }

    @Test
    void aWrongPasswordFailsWithProfilesOwnMessageAndExitStatus() throws Exception {
        SshClient.Answer answer = escrow("studio-02", "admin\nnot-the-password\n");

        assertThat(answer.exitCode()).isEqualTo(1);
        assertThat(answer.stdout()).endsWith("profiles: Unable to authenticate user information.\r\n").doesNotContain("not-the-password");
        assertThat(fleet.machine("studio-02").snapshot().bootstrapTokenEscrowed()).isFalse();
    }

    @Test
    void aScriptUsingMoreThanTheSimulatorUnderstandsFailsLikeTcl() throws Exception {
        try (SSHClient client = SshClient.connect(fleet.endpoint("studio-02"), "admin", key)) {
            SshClient.Answer answer = SshClient.exec(client, "/usr/bin/expect -c 'interact'", "");
            assertThat(answer.exitCode()).isEqualTo(1);
            assertThat(answer.stderr()).startsWith("invalid command name \"interact\"");
        }
    }
}
