package io.macfleet.ssh;

import org.junit.jupiter.api.Test;
import io.macfleet.cli.PlainCommandLine;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class SshCommandTest {

    @Test
    void forgetsARecordedKeyAndSaysWhenThereIsNone() {
        InMemoryHostKeyStore store = new InMemoryHostKeyStore();
        store.recordIfAbsent(new StoredHostKey("studio-01", "127.0.0.1:22", "ssh-ed25519",
                "SHA256:" + "B".repeat(43), Instant.now()));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine command = PlainCommandLine.configure(new CommandLine(new SshCommand.ForgetHostKey(store)));
        command.setOut(new PrintWriter(out));
        command.setErr(new PrintWriter(err));

        assertThat(command.execute("studio-01")).isZero();
        assertThat(out.toString()).contains("Forgot the host key of studio-01");
        assertThat(store.find("studio-01")).isEmpty();

        assertThat(command.execute("studio-01")).isEqualTo(2);
        assertThat(err.toString()).contains("no host key is recorded for studio-01");
    }

    @Test
    void optionsBecomeSettings() {
        SshOptions options = new SshOptions();
        new CommandLine(options).parseArgs("--accept-new-host-keys", "--parallel", "64", "--command-timeout", "5");
        SshSettings settings = options.settings("cli:test");
        assertThat(settings.acceptNewHostKeys()).isTrue();
        assertThat(settings.parallelism()).isEqualTo(64);
        assertThat(settings.limits().commandTimeout()).hasSeconds(5);
        assertThat(settings.limits().connectTimeout()).hasSeconds(10);
    }
}
