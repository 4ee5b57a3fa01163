package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.simulator.Launchd;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SshKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The node's LaunchDaemon plist: rendered, escaped, parsed back, refused when wrong, and run by a simulated Mac. */
class LaunchDaemonPlistTest {

    private static LaunchDaemon node(List<String> arguments, Map<String, String> environment) {
        return LaunchDaemon.node("io.macfleet.node", arguments, environment, "/usr/local/macfleet");
    }

    @Test
    void rendersEveryKeyTheNodeNeeds() throws IOException {
        LaunchDaemon daemon = node(List.of("/usr/bin/java", "-jar", "/usr/local/macfleet/node.jar", "serve", "--cluster",
                "/usr/local/macfleet/cluster.json", "--rank", "0"), Map.of("MACFLEET_NODE", "1"));
        String xml = LaunchDaemonPlist.render(daemon);
        assertThat(xml).startsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC")
                .contains("\t<key>Label</key>\n\t<string>io.macfleet.node</string>\n")
                .contains("\t<key>KeepAlive</key>\n\t<true/>\n", "\t<key>RunAtLoad</key>\n\t<true/>\n")
                .contains("\t<key>ProcessType</key>\n\t<string>Interactive</string>\n")
                .contains("\t<key>ThrottleInterval</key>\n\t<integer>10</integer>\n")
                .contains("<string>/var/log/macfleet/io.macfleet.node.out.log</string>",
                        "<string>/var/log/macfleet/io.macfleet.node.err.log</string>")
                .contains("\t<key>SoftResourceLimits</key>\n\t<dict>\n\t\t<key>NumberOfFiles</key>\n\t\t<integer>65536</integer>")
                .endsWith("</dict>\n</plist>\n");
        assertThat(LaunchDaemonPlist.parse(xml)).isEqualTo(daemon);
        assertThat(daemon.plistPath()).isEqualTo("/Library/LaunchDaemons/io.macfleet.node.plist");
    }

    @Test
    void escapesMarkupInArgumentsAndEnvironment() throws IOException {
        LaunchDaemon daemon = node(List.of("/usr/bin/java", "-Dname=<a & 'b' \"c\">", "--model", "/Models/R&D/q4.gguf"),
                Map.of("NOTE", "x < y && z > w"));
        String xml = LaunchDaemonPlist.render(daemon);
        assertThat(xml).contains("<string>-Dname=&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;</string>")
                .contains("<string>/Models/R&amp;D/q4.gguf</string>").contains("<string>x &lt; y &amp;&amp; z &gt; w</string>")
                .doesNotContain("R&D");
        assertThat(LaunchDaemonPlist.parse(xml)).isEqualTo(daemon);
    }

    @Test
    void refusesWhatLaunchdOrAPlistCannotTake() {
        assertThatThrownBy(() -> node(List.of("java", "-jar", "x.jar"), Map.of()))
                .hasMessageContaining("ProgramArguments must start with an absolute program path");
        assertThatThrownBy(() -> LaunchDaemon.node("../../etc/evil", List.of("/bin/true"), Map.of(), null))
                .hasMessageContaining("launchd label '../../etc/evil' is not a reverse-DNS name");
        assertThatThrownBy(() -> node(List.of("/bin/echo", "bell\u0007"), Map.of()))
                .hasMessageContaining("control character U+0007");
        assertThatThrownBy(() -> new LaunchDaemon("io.macfleet.node", List.of("/bin/true"), Map.of(), null, true, true, 10,
                "/tmp/out.log", "/var/log/macfleet/err.log", 65536))
                .hasMessageContaining("StandardOutPath must be a file under /var/log/macfleet/, got /tmp/out.log");
        assertThatThrownBy(() -> new LaunchDaemon("io.macfleet.node", List.of("/bin/true"), Map.of(), null, true, true, 0,
                "/var/log/macfleet/o.log", "/var/log/macfleet/e.log", 65536)).hasMessageContaining("ThrottleInterval");
    }

    @Test
    void parseNamesWhatIsWrong() {
        assertThatThrownBy(() -> LaunchDaemonPlist.parse("<plist><dict>")).hasMessageContaining("not well-formed XML");
        String background = LaunchDaemonPlist.render(node(List.of("/bin/true"), Map.of()))
                .replace("<string>Interactive</string>", "<string>Background</string>");
        assertThatThrownBy(() -> LaunchDaemonPlist.parse(background)).hasMessageContaining("ProcessType is Background");
        String noLabel = LaunchDaemonPlist.render(node(List.of("/bin/true"), Map.of()))
                .replace("\t<key>Label</key>\n\t<string>io.macfleet.node</string>\n", "");
        assertThatThrownBy(() -> LaunchDaemonPlist.parse(noLabel)).hasMessageContaining("no Label");
    }

    @Test
    void theSimulatorsLaunchdParsesItAndPrintsWhatOurParserReads(@TempDir Path directory) throws Exception {
        LaunchDaemon daemon = node(List.of("/bin/sleep", "600"), Map.of());
        String xml = LaunchDaemonPlist.render(daemon);
        Path file = directory.resolve("node.plist");
        Files.writeString(file, xml, StandardCharsets.UTF_8);
        Launchd.Job job = Launchd.parse(file, daemon.plistPath());
        assertThat(job.label()).isEqualTo("io.macfleet.node");
        assertThat(job.programArguments()).isEqualTo(List.of("/bin/sleep", "600"));
        assertThat(job.keepAlive()).isTrue();

        KeyPair key = SshKeys.generate();
        try (SimulatedFleet fleet = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic())
                .macStudio("studio-01", 512, "26.2").build().start();
             SimulatedMacLink link = new SimulatedMacLink(fleet, "studio-01", key)) {
            RemoteShell shell = link.shell();
            RemoteShell.Answer missing = shell.run("launchctl print system/io.macfleet.node");
            assertThat(LaunchdService.parse(missing.exitStatus(), missing.stdout(), missing.stderr()).loaded()).isFalse();

            Path onMac = fleet.machine("studio-01").resolve(daemon.plistPath());
            Files.createDirectories(onMac.getParent());
            Files.writeString(onMac, xml, StandardCharsets.UTF_8);
            RemoteShell.Answer bootstrap = shell.run("sudo -n -- launchctl bootstrap system " + daemon.plistPath());
            assertThat(bootstrap.exitStatus()).as(bootstrap.stderr()).isZero();
            try {
                RemoteShell.Answer print = shell.run("launchctl print system/io.macfleet.node");
                LaunchdService service = LaunchdService.parse(print.exitStatus(), print.stdout(), print.stderr());
                assertThat(service.running()).as(print.stdout()).isTrue();
                assertThat(service.runs()).hasValue(1);
                assertThat(service.lastExit()).isEqualTo(new LaunchdService.LastExit.NeverExited());
            } finally {
                shell.run("sudo -n -- launchctl bootout system/io.macfleet.node");
            }
        }
    }
}
