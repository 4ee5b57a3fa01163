package io.macfleet.ssh;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CommandTest {

    @Test
    void plainWordsStayReadableAndEverythingElseIsSingleQuoted() {
        Command command = Command.of("system_profiler", "SPHardwareDataType", "-json", "a b", "", "it's", "$HOME", "x;y");
        assertThat(command.render())
                .isEqualTo("system_profiler SPHardwareDataType -json 'a b' '' 'it'\\''s' '$HOME' 'x;y'");
    }

    @Test
    void sudoCommandsAreNonInteractiveAndEndOptionParsing() {
        assertThat(Command.sudo(PrivilegedProgram.PROFILES, "status", "-type", "bootstraptoken").render())
                .isEqualTo("sudo -n -- /usr/bin/profiles status -type bootstraptoken");
    }

    @Test
    void refusesProgramsThatAreNotANameOrPath() {
        assertThatThrownBy(() -> Command.of("ls; rm -rf /")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a program name or path");
        assertThatThrownBy(() -> Command.of("FOO=bar")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Command.of("rm -rf")).as("a space only in an absolute path").isInstanceOf(IllegalArgumentException.class);
        assertThat(Command.of("/Applications/Install macOS Tahoe.app/Contents/Resources/startosinstall", "--usage").render())
                .isEqualTo("'/Applications/Install macOS Tahoe.app/Contents/Resources/startosinstall' --usage");
        assertThatThrownBy(() -> Command.of("echo", "a\0b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NUL");
    }

    @Test
    void builderKeepsArgumentsInOrderAndMarksIdempotence() {
        Command command = Command.builder("ifconfig").arguments("-a").argument("en0").idempotent().build();
        assertThat(command.arguments()).isEqualTo(List.of("-a", "en0"));
        assertThat(command.idempotent()).isTrue();
        assertThat(Command.reading("sw_vers").idempotent()).isTrue();
        assertThat(Command.of("reboot").idempotent()).isFalse();
    }
}
