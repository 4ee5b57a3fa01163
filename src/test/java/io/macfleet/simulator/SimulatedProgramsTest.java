package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Simulated programs as an extension point: a program written in test code alone, added to a fleet with
 * {@code SimulatedFleet.Builder.program}, answers over SSH (with sudo, pipes and the machine's state) like the
 * standard ones; a fleet without it answers zsh's "command not found"; a name cannot be answered twice.
 */
class SimulatedProgramsTest {

    @TempDir
    static Path state;
    static KeyPair key;
    static SimulatedFleet fleet;

    /** A test-only program (its output is made up for this test, not a macOS format): GPU cores from the machine's spec. */
    static final class GpuCores implements SimulatedProgram {
        @Override
        public List<String> names() {
            return List.of("gpu-cores");
        }

        @Override
        public MacShell.Result run(Call call) {
            if (!call.root()) {
                return MacShell.Result.fail(1, "gpu-cores: must be run as root\n");
            }
            return MacShell.Result.ok(call.mac().name() + " GPU cores: " + call.state().spec().gpuCores() + "\nargs: " + call.arguments() + "\n");
        }
    }

    @BeforeAll
    static void startFleet() {
        TestSupport.quietSshLogs();
        key = SshKeys.generate();
        fleet = SimulatedFleet.builder(state.resolve("extended")).authorizedKey(key.getPublic()).baseAddress("127.0.0.151")
                .macStudio("studio-01", 512, "26.2").program(new GpuCores()).build().start();
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    @Test
    void aProgramAddedFromTestCodeAnswersOverSsh() throws IOException {
        int gpuCores = fleet.machine("studio-01").spec().gpuCores();
        SshClient.Answer answer = SshClient.exec(fleet, "studio-01", key, "sudo -n -- /usr/local/bin/gpu-cores --all");
        assertThat(answer.exitCode()).isZero();
        assertThat(answer.stdout()).isEqualTo("studio-01 GPU cores: " + gpuCores + "\nargs: [--all]\n");
        SshClient.Answer unprivileged = SshClient.exec(fleet, "studio-01", key, "gpu-cores");
        assertThat(unprivileged.exitCode()).isEqualTo(1);
        assertThat(unprivileged.stderr()).isEqualTo("gpu-cores: must be run as root\n");
        SshClient.Answer piped = SshClient.exec(fleet, "studio-01", key, "sudo -n gpu-cores | grep GPU");
        assertThat(piped.stdout()).isEqualTo("studio-01 GPU cores: " + gpuCores + "\n");
        // The standard programs are still there beside it.
        assertThat(SshClient.exec(fleet, "studio-01", key, "sw_vers -productVersion").stdout()).isEqualTo("26.2\n");
    }

    @Test
    void aFleetWithoutTheProgramDoesNotKnowIt() {
        SimulatedFleet plain = SimulatedFleet.builder(state.resolve("plain")).macStudio("studio-01", 256, "26.2").build();
        try {
            MacShell.Result result = new MacShell(plain, plain.machine("studio-01")).run("gpu-cores", () -> "");
            assertThat(result.exitCode()).isEqualTo(127);
            assertThat(result.stderr()).isEqualTo("zsh: command not found: gpu-cores\n");
        } finally {
            plain.close();
        }
    }

    @Test
    void twoProgramsCannotAnswerToTheSameName() {
        SimulatedProgram impostor = new SimulatedProgram() {
            @Override
            public List<String> names() {
                return List.of("sw_vers");
            }

            @Override
            public MacShell.Result run(Call call) {
                return MacShell.Result.ok("");
            }
        };
        assertThatThrownBy(() -> SimulatedFleet.builder(state.resolve("twice")).macStudio("studio-01", 256, "26.2").program(impostor).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("two simulated programs answer to 'sw_vers'");
    }

    @Test
    void theStandardListAnswersEveryProgramTheShellAnsweredBefore() {
        assertThat(new TreeSet<>(SimulatedPrograms.byName(SimulatedPrograms.standard()).keySet())).containsExactlyElementsOf(new TreeSet<>(List.of(
                "sw_vers", "system_profiler", "networksetup", "pmset", "sshd", "install", "ifconfig", "rdma_ctl", "ibv_devices", "ibv_devinfo",
                "profiles", "sysctl", "uname", "hostname", "whoami", "id", "uptime", "df", "echo", "true", "false", "cat", "ls", "mkdir", "rm",
                "test", "[", "chmod", "chown", "grep", "head", "tail", "wc", "awk", "sort", "launchctl", "shutdown", "reboot", "softwareupdate",
                "csrutil",
                // added with the OS-update programs (issue 15)
                "startosinstall", "diskutil", "dscl",
                // added with the deployment groundwork (issue 17)
                "shasum", "java", "installer",
                // added with --model URL and its download's move into place (issue 17)
                "curl", "mv",
                // added with secrets on standard input (issue 14): profiles' prompts answered by expect
                "expect",
                // added with the inference runtimes (issue 25): who holds a port
                "lsof",
                // added with the MLX runtime (issue 26): the venv, pip and the versions
                "python3",
                // added with Mac health (issue 30): power, thermal pressure and memory
                "powermetrics", "memory_pressure",
                // added with least privilege for the node (issue 29): owners and modes
                "stat")));
    }
}
