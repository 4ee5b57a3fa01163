package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.sshd.server.keyprovider.SimpleGeneratorHostKeyProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The system's OpenSSH client, with a generated key and a strict known_hosts file, talks to a simulated Mac. */
class OpenSshClientTest {

    @Test
    void openSshClientRunsSwVersWithStrictHostKeyChecking(@TempDir Path directory) throws Exception {
        Path ssh = Path.of("/usr/bin/ssh");
        assertThat(ssh).as("OpenSSH client (.ci/run installs openssh-client)").isExecutable();
        KeyPair key = SshKeys.generate();
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "macfleet-test");
        try (SimulatedFleet fleet = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic())
                .macStudio("studio-01", 512, "26.2").build().start()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint("studio-01");
            KeyPair hostKey = new SimpleGeneratorHostKeyProvider(fleet.hostKeyFile("studio-01")).loadKeys(null).iterator().next();
            Path knownHosts = directory.resolve("known_hosts");
            Files.writeString(knownHosts, "[" + endpoint.host() + "]:" + endpoint.port() + " " + SshKeys.publicKeyLine(hostKey.getPublic()) + "\n");

            Process process = new ProcessBuilder(ssh.toString(), "-F", "/dev/null", "-i", keyFile.toString(),
                    "-o", "UserKnownHostsFile=" + knownHosts, "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
                    "-o", "IdentitiesOnly=yes", "-p", String.valueOf(endpoint.port()), "admin@" + endpoint.host(), "sw_vers")
                    .redirectErrorStream(false).start();
            assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
            String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(process.exitValue()).as(stderr).isZero();
            assertThat(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                    .isEqualTo(MacosFormatsTest.sample("sw_vers/macos-26.2.txt"));

            fleet.changeHostKey("studio-01");
            Process changed = new ProcessBuilder(List.of(ssh.toString(), "-F", "/dev/null", "-i", keyFile.toString(),
                    "-o", "UserKnownHostsFile=" + knownHosts, "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
                    "-p", String.valueOf(endpoint.port()), "admin@" + endpoint.host(), "sw_vers")).start();
            assertThat(changed.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(changed.exitValue()).isEqualTo(255);
            assertThat(new String(changed.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)).contains("HOST IDENTIFICATION HAS CHANGED");
        }
    }
}
