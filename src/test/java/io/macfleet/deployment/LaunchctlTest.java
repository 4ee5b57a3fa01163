package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.ssh.Command;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Enable-then-bootstrap against launchd's answers as macOS words them (exit 5 "Input/output error" for a service that is
 * loaded already, 113 from print for one it does not know, 119 for a disabled one): a fake Mac that answers each
 * launchctl verb as told and keeps what it ran.
 */
class LaunchctlTest {

    private static final String LABEL = "io.macfleet.inference-node";

    /** Answers launchctl by its verb (enable, bootstrap, print); a verb not told answers 0. */
    private static final class FakeMac implements Launchctl.Runner {
        final Map<String, RemoteShell.Answer> answers = new HashMap<>();
        final List<String> ran = new ArrayList<>();

        FakeMac answer(String verb, int exitStatus, String stderr) {
            answers.put(verb, new RemoteShell.Answer(exitStatus, "", stderr));
            return this;
        }

        @Override
        public RemoteShell.Answer run(Command command) {
            ran.add((command.sudo() ? "sudo " : "") + command.program() + " " + String.join(" ", command.arguments()));
            return answers.getOrDefault(command.arguments().getFirst(), new RemoteShell.Answer(0, "", ""));
        }
    }

    @Test
    void enablesBeforeBootstrappingSoADisabledDaemonLoads() throws IOException {
        FakeMac mac = new FakeMac();
        Launchctl.enableAndBootstrap(mac, LABEL);
        assertThat(mac.ran).containsExactly("sudo /bin/launchctl enable system/" + LABEL,
                "sudo /bin/launchctl bootstrap system /Library/LaunchDaemons/" + LABEL + ".plist");
    }

    @Test
    void aDaemonLoadedAlreadyIsLeftAsItIs() throws IOException {
        FakeMac mac = new FakeMac().answer("bootstrap", 5, "Bootstrap failed: 5: Input/output error\n");
        Launchctl.enableAndBootstrap(mac, LABEL);
        assertThat(mac.ran).last().isEqualTo("launchctl print system/" + LABEL);
    }

    @Test
    void anInputOutputErrorForADaemonThatIsNotLoadedFailsWithLaunchdsWords() {
        FakeMac mac = new FakeMac().answer("bootstrap", 5, "Bootstrap failed: 5: Input/output error\n")
                .answer("print", 113, "Could not find service \"" + LABEL + "\" in domain for system\n");
        assertThatThrownBy(() -> Launchctl.enableAndBootstrap(mac, LABEL)).isInstanceOf(Launchctl.Refused.class)
                .hasMessage("launchctl bootstrap system /Library/LaunchDaemons/" + LABEL + ".plist failed (exit 5): Bootstrap failed: 5: Input/output error")
                .satisfies(refused -> assertThat(((Launchctl.Refused) refused).exitStatus()).isEqualTo(5));
    }

    @Test
    void aDisabledServiceOrAFailedEnableIsRefused() {
        FakeMac disabled = new FakeMac().answer("bootstrap", 119, "Bootstrap failed: 119: Service is disabled\n");
        assertThatThrownBy(() -> Launchctl.enableAndBootstrap(disabled, LABEL)).isInstanceOf(Launchctl.Refused.class)
                .hasMessageEndingWith("failed (exit 119): Bootstrap failed: 119: Service is disabled");
        assertThat(disabled.ran).hasSize(2);

        FakeMac notPermitted = new FakeMac().answer("enable", 1, "Operation not permitted\n");
        assertThatThrownBy(() -> Launchctl.enableAndBootstrap(notPermitted, LABEL)).isInstanceOf(Launchctl.Refused.class)
                .hasMessage("launchctl enable system/" + LABEL + " failed (exit 1): Operation not permitted");
        assertThat(notPermitted.ran).as("nothing is bootstrapped after a failed enable").hasSize(1);
    }

    @Test
    void loadedReadsPrintsExitStatus() throws IOException {
        assertThat(Launchctl.loaded(new FakeMac(), LABEL)).isTrue();
        assertThat(Launchctl.loaded(new FakeMac().answer("print", 113, "Could not find service"), LABEL)).isFalse();
        assertThatThrownBy(() -> Launchctl.loaded(new FakeMac().answer("print", 64, "Usage: launchctl print"), LABEL))
                .isInstanceOf(Launchctl.Refused.class).hasMessageContaining("exit 64");
    }
}
