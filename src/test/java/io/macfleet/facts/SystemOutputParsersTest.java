package io.macfleet.facts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** uptime, df and ifconfig against the stored samples, and what bad output gives. */
class SystemOutputParsersTest {

    static String sample(String path) throws IOException {
        try (InputStream in = SystemOutputParsersTest.class.getResourceAsStream("/macos-samples/" + path)) {
            assertThat(in).as(path).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void uptimeInHoursAndMinutes() throws IOException {
        assertThat(SystemOutputParsers.uptime(sample("uptime/macos-26.2-hours.txt"))).isEqualTo(Duration.ofHours(9).plusMinutes(53));
    }

    @Test
    void uptimeVariants() throws IOException {
        assertThat(SystemOutputParsers.uptime(sample("uptime/days-and-minutes.txt"))).isEqualTo(Duration.ofDays(12).plusMinutes(3));
        assertThat(SystemOutputParsers.uptime("9:01  up 3 days,  2:03, 1 user, load averages: 0.1 0.2 0.3"))
                .isEqualTo(Duration.ofDays(3).plusHours(2).plusMinutes(3));
        assertThat(SystemOutputParsers.uptime("9:01  up 1 min, 1 user, load averages: 0.1 0.2 0.3")).isEqualTo(Duration.ofMinutes(1));
        assertThat(SystemOutputParsers.uptime("9:01  up 40 secs, 0 users, load averages: 0.1 0.2 0.3")).isEqualTo(Duration.ofSeconds(40));
        assertThat(SystemOutputParsers.uptime("9:01  up 2 hrs, 3 users, load averages: 0.1 0.2 0.3")).isEqualTo(Duration.ofHours(2));
    }

    @Test
    void uptimeGarbageNamesTheCommand() {
        assertThatThrownBy(() -> SystemOutputParsers.uptime("zq8#k up"))
                .isInstanceOf(FactsParseException.class).hasMessageStartingWith("uptime: expected 'up ..., N users");
        assertThatThrownBy(() -> SystemOutputParsers.uptime("9:01  up soon, 1 user, load averages: 0.1"))
                .isInstanceOf(FactsParseException.class).hasMessageContaining("cannot read 'soon'");
    }

    @Test
    void freeDiskFromKilobyteBlocks() throws IOException {
        assertThat(SystemOutputParsers.freeDiskBytes(sample("df/df-k-root.txt"))).isEqualTo(1739870612L * 1024);
    }

    @Test
    void freeDiskWithUnits() {
        String human = "Filesystem        Size    Used   Avail Capacity iused ifree %iused  Mounted on\n"
                + "/dev/disk3s1s1   1.8Ti     12Gi   1.6Ti     1%    453k  4.3G    0%   /\n";
        assertThat(SystemOutputParsers.freeDiskBytes(human)).isEqualTo((long) (1.6 * Math.pow(1024, 4)));
    }

    @Test
    void freeDiskNeedsTheHeaderAndTheRootLine() {
        assertThatThrownBy(() -> SystemOutputParsers.freeDiskBytes("/dev/disk3s1s1 1 2 3 1% /\n"))
                .isInstanceOf(FactsParseException.class).hasMessageStartingWith("df -k /: expected a 'Filesystem ...' header");
        assertThatThrownBy(() -> SystemOutputParsers.freeDiskBytes("Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/x 1 2 3 1% /Volumes/Data\n"))
                .isInstanceOf(FactsParseException.class).hasMessageContaining("no line for the file system mounted on /");
        assertThatThrownBy(() -> SystemOutputParsers.freeDiskBytes("Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/x 1 2 lots 1% /\n"))
                .isInstanceOf(FactsParseException.class).hasMessageContaining("line 2: 'lots' is not a size");
    }

    @Test
    void interfacesWithAddressesAndStatus() throws IOException {
        List<NetworkInterface> interfaces = SystemOutputParsers.interfaces(sample("ifconfig/mac-studio-thunderbolt-bridge.txt"));
        assertThat(interfaces).extracting(NetworkInterface::name).containsExactly("lo0", "gif0", "stf0", "en0", "en3", "bridge0");
        NetworkInterface ethernet = interfaces.get(3);
        assertThat(ethernet.ipv4()).containsExactly("192.168.50.11/24");
        assertThat(ethernet.ipv6()).containsExactly("fe80::1c8f:2b9e:4a6d:93c1%en0/64");
        assertThat(ethernet.macAddress()).isEqualTo("1c:f6:4c:2a:11:0e");
        assertThat(ethernet.status()).isEqualTo("active");
        assertThat(ethernet.up()).isTrue();
        assertThat(interfaces.get(0).ipv4()).containsExactly("127.0.0.1/8");
        assertThat(interfaces.get(2).flags()).isEmpty();
        assertThat(interfaces.get(4).status()).isEqualTo("inactive");
        assertThat(interfaces.get(5).status()).isEqualTo("inactive");
        assertThat(SimpleOutputParsers.bridgeActive(sample("ifconfig/mac-studio-thunderbolt-bridge.txt"))).isFalse();
    }

    @Test
    void ifconfigGarbageNamesTheLine() {
        assertThatThrownBy(() -> SystemOutputParsers.interfaces("en0: flags=8863<UP> mtu 1500\n\tinet 10.0.0.300x netmask 0xffffff00\n"))
                .isInstanceOf(FactsParseException.class).hasMessageStartingWith("ifconfig: line 2: expected 'inet A.B.C.D netmask 0xMASK'");
        assertThatThrownBy(() -> SystemOutputParsers.interfaces("q#e8z,,x\n"))
                .isInstanceOf(FactsParseException.class).hasMessageStartingWith("ifconfig: line 1: expected 'NAME: flags=");
        assertThatThrownBy(() -> SystemOutputParsers.interfaces("\n"))
                .isInstanceOf(FactsParseException.class).hasMessageContaining("no interfaces");
    }
}
