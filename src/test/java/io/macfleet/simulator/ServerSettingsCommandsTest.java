package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commands provisioning uses to make a Mac Studio a headless server (pmset, sshd -T, install, the Thunderbolt
 * Bridge service), over real SSH, against the real samples in macos-samples/pmset and macos-samples/sshd-T.
 */
class ServerSettingsCommandsTest {
    @TempDir
    static Path state;
    static KeyPair key;
    static SimulatedFleet fleet;

    @BeforeAll
    static void startFleet() {
        TestSupport.quietSshLogs();
        key = SshKeys.generate();
        fleet = SimulatedFleet.builder(state)
                .authorizedKey(key.getPublic())
                .rebootDuration(Duration.ofMillis(200))
                .macStudio("studio-01", 512, "26.2")
                .macStudio("studio-02", 512, "26.2")
                .build().start();
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    private static SshClient.Answer run(String machine, String command) throws IOException {
        return SshClient.exec(fleet, machine, key, command);
    }

    /** Splits a pmset settings line into name and value: the value is the first word starting with a digit or '/'. */
    private static Map.Entry<String, String> pmsetSetting(String line) {
        String[] words = line.strip().split(" +");
        int first = 0;
        while (first < words.length && !Character.isDigit(words[first].charAt(0)) && words[first].charAt(0) != '/') {
            first++;
        }
        assertThat(first).as("a value in '" + line + "'").isBetween(1, words.length - 1);
        String name = String.join(" ", List.of(words).subList(0, first));
        return Map.entry(name, line.substring(line.indexOf(words[first], 1 + name.length())));
    }

    private static List<String> settingLines(String output) {
        return output.lines().filter(line -> line.startsWith(" ")).toList();
    }

    @Test
    void pmsetPrintsEverySettingInTheRealColumnLayout() throws Exception {
        String real = MacosFormatsTest.sample("pmset/g-macbook-pro-m3.txt");
        SshClient.Answer simulated = run("studio-01", "pmset -g");

        assertThat(simulated.exitCode()).isZero();
        assertThat(simulated.stdout()).startsWith("System-wide power settings:\nCurrently in use:\n");
        assertThat(real).startsWith("System-wide power settings:\nCurrently in use:\n");
        for (String sample : List.of(real, simulated.stdout())) {
            for (String line : settingLines(sample)) {
                Map.Entry<String, String> setting = pmsetSetting(line);
                assertThat(line).isEqualTo(String.format(Locale.ROOT, " %-20s %s", setting.getKey(), setting.getValue()));
            }
        }
        assertThat(simulated.stdout()).contains("\n Sleep On Power Button 1\n")
                .containsPattern("\n sleep {16}1 \\(sleep prevented by [a-z, ]+\\)\n");
        Set<String> realNames = new TreeSet<>();
        settingLines(real).forEach(line -> realNames.add(pmsetSetting(line).getKey()));
        Set<String> simulatedNames = new TreeSet<>();
        settingLines(simulated.stdout()).forEach(line -> simulatedNames.add(pmsetSetting(line).getKey()));
        // A desktop lacks the laptop's battery and hibernation settings and has restart after power loss.
        assertThat(simulatedNames).contains("sleep", "displaysleep", "disksleep", "womp", "autorestart", "Sleep On Power Button")
                .doesNotContain("lowpowermode", "hibernatemode");
        assertThat(realNames).contains("sleep", "displaysleep", "disksleep", "womp", "Sleep On Power Button");
    }

    @Test
    void pmsetCustomHasTheAcPowerSectionOfTheRealLayout() throws Exception {
        String real = MacosFormatsTest.sample("pmset/g-custom-laptop.txt");
        String simulated = run("studio-01", "pmset -g custom").stdout();

        assertThat(simulated).startsWith("AC Power:\n").doesNotContain("Battery Power:");
        assertThat(real).contains("\nAC Power:\n");
        for (String line : settingLines(simulated)) {
            Map.Entry<String, String> setting = pmsetSetting(line);
            assertThat(line).isEqualTo(String.format(Locale.ROOT, " %-20s %s", setting.getKey(), setting.getValue()));
        }
    }

    @Test
    void pmsetChangesNeedRootAndSurviveAReboot() throws Exception {
        SshClient.Answer refused = run("studio-02", "pmset -a sleep 0");
        assertThat(refused.exitCode()).isEqualTo(1);
        assertThat(refused.stderr()).isEqualTo("'pmset' must be run as root...\n");

        SshClient.Answer changed = run("studio-02", "sudo -n /usr/bin/pmset -a sleep 0 displaysleep 0 disksleep 0 autorestart 1 womp 1");
        assertThat(changed.exitCode()).isZero();
        fleet.reboot("studio-02");
        assertThat(TestSupport.await(Duration.ofSeconds(10), () -> fleet.sshReachable("studio-02"))).isTrue();

        String after = run("studio-02", "pmset -g").stdout();
        assertThat(after).contains("\n sleep                0\n", "\n displaysleep         0\n", "\n disksleep            0\n",
                "\n autorestart          1\n", "\n womp                 1\n");
        assertThat(fleet.machine("studio-02").snapshot().powerSettings()).containsEntry("sleep", "0").containsEntry("autorestart", "1");

        SshClient.Answer unknown = run("studio-02", "sudo -n pmset -a hibernatemode 3");
        assertThat(unknown.exitCode()).isEqualTo(1);
        assertThat(unknown.stderr()).startsWith("Usage: pmset");
    }

    private static Map<String, String> sshdSettings(String output) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String line : output.split("\n")) {
            int space = line.indexOf(' ');
            assertThat(space).as("'keyword value' in '" + line + "'").isPositive();
            String keyword = line.substring(0, space);
            assertThat(keyword).as("sshd -T prints lower-case keywords").isEqualTo(keyword.toLowerCase(Locale.ROOT));
            settings.putIfAbsent(keyword, line.substring(space + 1));
        }
        return settings;
    }

    @Test
    void sshdEffectiveSettingsHaveTheRealKeywordsAndOrder() throws Exception {
        Map<String, String> real = sshdSettings(MacosFormatsTest.sample("sshd-T/openssh-10-kali-linux.txt"));
        SshClient.Answer answer = run("studio-01", "sudo -n /usr/sbin/sshd -T");
        assertThat(answer.exitCode()).isZero();
        Map<String, String> simulated = sshdSettings(answer.stdout());

        List<String> realOrder = new ArrayList<>(real.keySet());
        realOrder.retainAll(simulated.keySet());
        List<String> simulatedOrder = new ArrayList<>(simulated.keySet());
        simulatedOrder.retainAll(real.keySet());
        assertThat(simulatedOrder).as("keywords in OpenSSH's dump order").isEqualTo(realOrder);
        assertThat(simulated.keySet()).as("every simulated keyword exists in real OpenSSH 10").isSubsetOf(real.keySet());
        assertThat(simulated).containsEntry("passwordauthentication", "yes").containsEntry("kbdinteractiveauthentication", "yes")
                .containsEntry("permitrootlogin", "prohibit-password").containsEntry("usepam", "yes")
                .containsEntry("subsystem", "sftp /usr/libexec/sftp-server");

        SshClient.Answer withoutRoot = run("studio-01", "sshd -T");
        assertThat(withoutRoot.exitCode()).isEqualTo(1);
        assertThat(withoutRoot.stderr()).isEqualTo("sshd: no hostkeys available -- exiting.\n");
    }

    @Test
    void aDropInInstalledWithRootChangesTheEffectiveSettingsAndTheFirstValueWins() throws Exception {
        Path upload = fleet.machine("studio-02").resolve("/tmp/010-macfleet.conf");
        Files.writeString(upload, "# macfleet\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin no\n");
        Path later = fleet.machine("studio-02").resolve("/etc/ssh/sshd_config.d/200-other.conf");
        Files.writeString(later, "PasswordAuthentication yes\n");

        SshClient.Answer refused = run("studio-02", "install -m 644 /tmp/010-macfleet.conf /etc/ssh/sshd_config.d/010-macfleet.conf");
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.stderr()).contains("Permission denied");

        SshClient.Answer installed = run("studio-02",
                "sudo -n /usr/bin/install -m 644 -o root -g wheel /tmp/010-macfleet.conf /etc/ssh/sshd_config.d/010-macfleet.conf");
        assertThat(installed.exitCode()).isZero();
        assertThat(run("studio-02", "sudo -n /bin/launchctl kickstart -k system/com.openssh.sshd").exitCode()).isZero();

        Map<String, String> effective = sshdSettings(run("studio-02", "sudo -n sshd -T").stdout());
        assertThat(effective).containsEntry("passwordauthentication", "no").containsEntry("kbdinteractiveauthentication", "no")
                .containsEntry("permitrootlogin", "no");
        assertThat(run("studio-02", "cat /etc/ssh/sshd_config.d/100-macos.conf").stdout()).contains("UsePAM yes\n");
        Files.delete(later);
    }

    @Test
    void theThunderboltBridgeServiceCanBeReadAndSwitchedOff() throws Exception {
        assertThat(run("studio-01", "networksetup -getnetworkserviceenabled 'Thunderbolt Bridge'").stdout()).isEqualTo("Enabled\n");
        assertThat(run("studio-01", "sudo -n /usr/sbin/networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' off").exitCode()).isZero();
        assertThat(run("studio-01", "networksetup -getnetworkserviceenabled 'Thunderbolt Bridge'").stdout()).isEqualTo("Disabled\n");
        assertThat(run("studio-01", "sudo -n /usr/sbin/networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' on").exitCode()).isZero();
    }
}
