package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SshKeys;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The simulated Mac answers shasum as macOS's /usr/bin/shasum does: "<hex>  <path>", stderr and exit 1 when missing. */
class ShasumOnSimulatedMacTest {

    @Test
    void answersLikeMacOs(@TempDir Path directory) throws Exception {
        KeyPair key = SshKeys.generate();
        try (SimulatedFleet fleet = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic())
                .macStudio("studio-01", 512, "26.2").build().start();
             SimulatedMacLink link = new SimulatedMacLink(fleet, "studio-01", key)) {
            Files.writeString(fleet.machine("studio-01").resolve("/tmp/abc.txt"), "abc", StandardCharsets.UTF_8);
            // SHA-256("abc") and SHA-1("abc"), the FIPS 180-2 test vectors.
            assertThat(link.shell().run("shasum -a 256 /tmp/abc.txt")).isEqualTo(new RemoteShell.Answer(0,
                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  /tmp/abc.txt\n", ""));
            assertThat(link.shell().run("shasum /tmp/abc.txt").stdout())
                    .isEqualTo("a9993e364706816aba3e25717850c26c9cd0d89d  /tmp/abc.txt\n");
            assertThat(link.shell().run("shasum -a 256 " + RemoteShell.quote("/tmp/missing file")))
                    .isEqualTo(new RemoteShell.Answer(1, "", "shasum: /tmp/missing file: No such file or directory\n"));
        }
    }
}
