package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every command's output, fetched over a real SSH connection, against the stored real samples. */
class MacosFormatsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
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
                .macStudio("studio-01", 512, "26.2")
                .machine(MacSpec.macStudioM3Ultra("studio-02", 256), MacosRelease.of("26.2"), true)
                .build().start();
        fleet.cabling().plug("studio-01:2", "studio-02:2", LinkSpeed.TB5);
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    static String sample(String path) throws IOException {
        try (InputStream in = MacosFormatsTest.class.getResourceAsStream("/macos-samples/" + path)) {
            assertThat(in).as("sample " + path).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static SshClient.Answer run(String machine, String command) throws IOException {
        return SshClient.exec(fleet, machine, key, command);
    }

    @Test
    void swVersIsByteForByteTheRealFormat() throws IOException {
        assertThat(run("studio-01", "sw_vers").stdout()).isEqualTo(sample("sw_vers/macos-26.2.txt"));
        assertThat(run("studio-01", "sw_vers -productVersion").stdout()).isEqualTo("26.2\n");
        assertThat(run("studio-01", "sw_vers -buildVersion").stdout()).isEqualTo("25C56\n");
    }

    @Test
    void unameMatchesTheRealKernelStringOnTheM3UltraSoc() throws IOException {
        String expected = sample("uname/a-macos-26.2-t8103.txt").replace("C02G75WJQ05N", "studio-01").replace("T8103", "T6031");
        assertThat(run("studio-01", "uname -a").stdout()).isEqualTo(expected);
        assertThat(run("studio-01", "uname").stdout()).isEqualTo("Darwin\n");
    }

    @Test
    void sysctlMemsizeOfA512GigabyteStudioIsTheRealOne() throws IOException {
        assertThat(run("studio-01", "sysctl hw.memsize").stdout()).isEqualTo(sample("sysctl/hw.memsize-m3-ultra-512gb.txt"));
        assertThat(run("studio-02", "sysctl -n hw.memsize").stdout()).isEqualTo("274877906944\n");
    }

    @Test
    void appleJsonWriterReproducesTheRealThunderboltCaptureByteForByte() throws IOException {
        String real = sample("system_profiler-SPThunderboltDataType/mac-studio-m3-ultra-omlx.json");
        Object parsed = JSON.readValue(real, Object.class);
        assertThat(AppleJson.write(parsed)).isEqualTo(real);
        String hardware = sample("system_profiler-SPHardwareDataType/mac-studio-m2-ultra-masked.json");
        assertThat(AppleJson.write(JSON.readValue(hardware, Object.class))).isEqualTo(hardware.strip() + "\n");
    }

    @Test
    void thunderboltJsonHasTheRealStructureAndCrossReferencedDomains() throws IOException {
        JsonNode real = JSON.readTree(sample("system_profiler-SPThunderboltDataType/mac-studio-m3-ultra-omlx.json")).get("SPThunderboltDataType");
        JsonNode one = JSON.readTree(run("studio-01", "system_profiler SPThunderboltDataType -json").stdout()).get("SPThunderboltDataType");
        JsonNode two = JSON.readTree(run("studio-02", "system_profiler -json SPThunderboltDataType").stdout()).get("SPThunderboltDataType");

        assertThat(names(one)).containsExactly("thunderboltusb4_bus_5", "thunderboltusb4_bus_4", "thunderboltusb4_bus_3",
                "thunderboltusb4_bus_2", "thunderboltusb4_bus_1", "thunderboltusb4_bus_0");
        JsonNode realEmpty = real.get(0);
        JsonNode realCabled = real.get(4);
        JsonNode cabled = one.get(4);
        assertThat(keys(one.get(0))).isEqualTo(keys(realEmpty));
        assertThat(keys(one.get(0).get("receptacle_1_tag"))).isEqualTo(keys(realEmpty.get("receptacle_1_tag")));
        assertThat(keys(cabled)).isEqualTo(keys(realCabled));
        assertThat(keys(cabled.get("receptacle_1_tag"))).isEqualTo(keys(realCabled.get("receptacle_1_tag")));
        assertThat(keys(cabled.get("_items").get(0))).isEqualTo(keys(realCabled.get("_items").get(0)));
        assertThat(cabled.get("receptacle_1_tag").get("current_speed_key").asText()).isEqualTo("80 Gb/s");
        assertThat(cabled.get("receptacle_1_tag").get("receptacle_id_key").asText()).isEqualTo("2");
        assertThat(one.get(0).get("receptacle_1_tag").get("current_speed_key").asText()).isEqualTo("Up to 120 Gb/s");
        assertThat(cabled.get("_items").get(0).get("device_name_key").asText()).isEqualTo("Mac15,14");
        assertThat(cabled.get("_items").get(0).get("_name").asText()).isEqualTo("Mac Studio");

        // The cable is recognised from both ends: each side lists the other side's bus domain.
        assertThat(cabled.get("_items").get(0).get("domain_uuid_key").asText()).isEqualTo(two.get(4).get("domain_uuid_key").asText());
        assertThat(two.get(4).get("_items").get(0).get("domain_uuid_key").asText()).isEqualTo(cabled.get("domain_uuid_key").asText());
        // studio-02 has RDMA on, so studio-01 sees its RDMA service; not the other way round.
        assertThat(names(cabled.get("_items").get(0).get("services_title"))).containsExactly("service_ip", "unknown_xd_service");
        assertThat(names(two.get(4).get("_items").get(0).get("services_title"))).containsExactly("service_ip");
    }

    @Test
    void thunderboltTextFormHasBusAndPortSections() throws IOException {
        String text = run("studio-01", "system_profiler SPThunderboltDataType").stdout();
        assertThat(text).startsWith("Thunderbolt/USB4:\n\n    Thunderbolt/USB4 Bus 5:\n\n      Vendor Name: Apple Inc.\n      Device Name: Mac Studio\n");
        assertThat(text).contains("          Status: Device connected\n          Link Status: 0x2\n          Speed: 80 Gb/s\n          Receptacle: 2\n")
                .contains("        Mac Studio:\n\n          Vendor Name: Apple Inc.\n          Device Name: Mac15,14\n")
                .contains("            Service: Unknown:\n              Protocol ID: 64087\n");
    }

    @Test
    void hardwareJsonHasTheRealKeysAndTheStudiosValues() throws IOException {
        JsonNode real = JSON.readTree(sample("system_profiler-SPHardwareDataType/mac-studio-m2-ultra-masked.json")).get("SPHardwareDataType").get(0);
        JsonNode ours = JSON.readTree(run("studio-01", "system_profiler -json SPHardwareDataType").stdout()).get("SPHardwareDataType").get(0);
        assertThat(keys(ours)).isEqualTo(keys(real));
        assertThat(ours.get("machine_model").asText()).isEqualTo("Mac15,14");
        assertThat(ours.get("chip_type").asText()).isEqualTo("Apple M3 Ultra");
        assertThat(ours.get("physical_memory").asText()).isEqualTo("512 GB");
        assertThat(ours.get("number_processors").asText()).isEqualTo("proc 32:24:8:0");
        assertThat(ours.get("serial_number").asText()).isEqualTo(fleet.machine("studio-01").spec().serialNumber());
    }

    @Test
    void displaysJsonIsTheRealCaptureByteForByte() throws IOException {
        MacSpec m3Max = new MacSpec("m3-max", "Mac15,9", "MacBook Pro", "Apple M3 Max", 12, 4, 40, 96, "C02XXXXXXXXX",
                "00000000-0000-0000-0000-000000000000", true);
        assertThat(MacosOutput.displaysJson(m3Max)).isEqualTo(sample("system_profiler-SPDisplaysDataType/m3-max-no-display.json") + "\n");

        JsonNode ours = JSON.readTree(run("studio-01", "system_profiler -json SPDisplaysDataType").stdout()).get("SPDisplaysDataType").get(0);
        assertThat(ours.get("sppci_model").asText()).isEqualTo("Apple M3 Ultra");
        assertThat(ours.get("sppci_cores").asText()).isEqualTo("80");
    }

    @Test
    void networksetupPrintsTheRealLayoutAndTheStudioPortMap() throws IOException {
        List<MacosOutput.HardwarePort> samplePorts = List.of(
                new MacosOutput.HardwarePort("Ethernet Adapter (en3)", "en3", "02:00:00:00:00:04"),
                new MacosOutput.HardwarePort("Thunderbolt Bridge", "bridge0", "02:00:00:00:00:01"),
                new MacosOutput.HardwarePort("Wi-Fi", "en0", "02:00:00:00:00:05"),
                new MacosOutput.HardwarePort("Thunderbolt 1", "en1", "02:00:00:00:00:01"),
                new MacosOutput.HardwarePort("Thunderbolt 2", "en6", "02:00:00:00:00:02"),
                new MacosOutput.HardwarePort("Thunderbolt 3", "en2", "02:00:00:00:00:03"));
        assertThat(MacosOutput.listAllHardwarePorts(samplePorts)).isEqualTo("\n" + sample("networksetup-listallhardwareports/macbook-pro-m5-max.txt"));

        String ours = run("studio-01", "networksetup -listallhardwareports").stdout();
        Map<String, String> expected = portMap(sample("networksetup-listallhardwareports/mac-studio-m3-ultra-trimmed.txt"));
        Map<String, String> actual = portMap(ours);
        for (String port : List.of("Ethernet", "Wi-Fi", "Thunderbolt 1", "Thunderbolt 2", "Thunderbolt 3", "Thunderbolt 4", "Thunderbolt 5", "Thunderbolt 6")) {
            assertThat(actual.get(port)).as(port).isEqualTo(expected.get(port));
        }
        assertThat(actual.get("Thunderbolt Bridge")).isEqualTo("bridge0");
    }

    @Test
    void networksetupGetInfoAndSetManualAnswerAsMacosDoes() throws IOException {
        // An unplugged port without an address: the layout of the real "no address" capture, then the IPv6 lines.
        assertThat(run("studio-01", "networksetup -getinfo 'Thunderbolt 6'").stdout()).startsWith(sample("networksetup-getinfo/no-address.txt"));
        SshClient.Answer unknown = run("studio-01", "networksetup -getinfo 'Thunderbolt 9'");
        assertThat(unknown.exitCode()).isNotZero();
        assertThat(unknown.stdout() + unknown.stderr()).contains("** Error: The parameters were not valid.");
        SshClient.Answer notRoot = run("studio-01", "networksetup -setmanual 'Thunderbolt 6' 192.168.0.5 255.255.255.252");
        assertThat(notRoot.exitCode()).isNotZero();
        assertThat(notRoot.stdout() + notRoot.stderr()).contains("requires admin privileges");
        try {
            SshClient.Answer set = run("studio-01", "sudo -n networksetup -setmanual 'Thunderbolt 6' 192.168.0.5 255.255.255.252");
            assertThat(set.exitCode()).isZero();
            assertThat(set.stdout()).isEmpty();
            // The first three lines as in the real manual capture, with our address; ifconfig shows it on en7.
            String info = run("studio-01", "networksetup -getinfo 'Thunderbolt 6'").stdout();
            List<String> sampleKeys = sample("networksetup-getinfo/manual.txt").lines().limit(3).map(line -> line.replaceAll(":.*", ":")).toList();
            assertThat(info.lines().limit(3).map(line -> line.replaceAll(":.*", ":")).toList()).isEqualTo(sampleKeys);
            assertThat(info).startsWith("Manual Configuration\nIP address: 192.168.0.5\nSubnet mask: 255.255.255.252\n");
            assertThat(run("studio-01", "ifconfig en7").stdout()).contains("inet 192.168.0.5 netmask 0xfffffffc");
        } finally {
            fleet.machine("studio-01").setIpv4("en7", null);
        }
    }

    @Test
    void rdmaToolsPrintTheRealFormats() throws IOException {
        List<MacosOutput.RdmaDevice> sampleDevices = List.of(
                new MacosOutput.RdmaDevice("rdma_en1", 2, 1, false, 1),
                new MacosOutput.RdmaDevice("rdma_en6", 3, 1, false, 2),
                new MacosOutput.RdmaDevice("rdma_en2", 4, 1, false, 3));
        assertThat(MacosOutput.ibvDevinfo(sampleDevices)).isEqualTo(sample("ibv_devinfo/macbook-pro-three-ports-down.txt"));
        assertThat(MacosOutput.ibvDevices(List.of(new MacosOutput.RdmaDevice("rdma_en1", 1, 0, false, 1),
                new MacosOutput.RdmaDevice("rdma_en6", 2, 0, false, 2), new MacosOutput.RdmaDevice("rdma_en2", 3, 0, false, 3))))
                .isEqualTo(sample("ibv_devices/macbook-pro-rdma-enabled.txt"));

        assertThat(run("studio-01", "ibv_devices").stdout()).isEqualTo(sample("ibv_devices/rdma-disabled.txt"));
        assertThat(run("studio-01", "rdma_ctl status").stdout()).isEqualTo("disabled\n");
        assertThat(run("studio-02", "rdma_ctl status").stdout()).isEqualTo(sample("rdma_ctl/status-enabled.txt"));
        String devices = run("studio-02", "ibv_devices").stdout();
        assertThat(devices).contains("    rdma_en2        \t", "    rdma_en7        \t");
        String devinfo = run("studio-02", "ibv_devinfo -d rdma_en3").stdout();
        // Cabled at TB5 on port 2 (en3), but studio-01 has RDMA off: the port stays down.
        assertThat(devinfo).contains("hca_id:\trdma_en3\n", "\ttransport:\t\t\tThunderbolt (100)\n", "state:\t\t\tPORT_DOWN (1)");

        SshClient.Answer enable = run("studio-02", "sudo -n rdma_ctl enable");
        assertThat(enable.exitCode()).isNotZero();
        assertThat(enable.stderr()).isEqualTo(sample("rdma_ctl/enable-outside-recovery.txt"));
    }

    @Test
    void bootstrapTokenStatusIsTheRealFormat() throws IOException {
        SimulatedMac mac = fleet.machine("studio-02");
        mac.setMdmEnrolled(true);
        mac.setBootstrapTokenEscrowed(true);
        assertThat(run("studio-02", "sudo -n profiles status -type bootstraptoken").stdout()).isEqualTo(sample("profiles/status-bootstraptoken-escrowed.txt"));
        assertThat(run("studio-02", "profiles status -type enrollment").stdout()).contains("MDM enrollment: Yes (User Approved)\n");
        assertThat(run("studio-01", "sudo -n profiles status -type bootstraptoken").stdout()).contains("escrowed to server: NO\n");
    }

    @Test
    void behavesLikeZshForUnknownCommandsQuotingAndSudo() throws IOException {
        SshClient.Answer unknown = run("studio-01", "frobnicate --now");
        assertThat(unknown.stderr()).isEqualTo("zsh: command not found: frobnicate\n");
        assertThat(unknown.exitCode()).isEqualTo(127);
        assertThat(run("studio-01", "echo \"a  b\" 'c d' e\\ f").stdout()).isEqualTo("a  b c d e f\n");
        assertThat(run("studio-01", "false && echo no || echo yes; hostname").stdout()).isEqualTo("yes\nstudio-01\n");
        SshClient.Answer sudo = run("studio-01", "sudo reboot");
        assertThat(sudo.exitCode()).isEqualTo(1);
        assertThat(sudo.stderr()).contains("sudo: a password is required");
        assertThat(run("studio-01", "sudo -n whoami").stdout()).isEqualTo("root\n");
        assertThat(run("studio-02", "ibv_devinfo | grep -c PORT_").stdout()).isEqualTo("6\n");
        assertThat(run("studio-01", "sw_vers | grep ProductVersion | awk '{print $2}'").stdout()).isEqualTo("26.2\n");
        assertThat(run("studio-01", "networksetup -listallhardwareports | grep -q 'Thunderbolt 6'").exitCode()).isZero();
        assertThat(run("studio-01", "sw_vers | grep -q Windows").exitCode()).isEqualTo(1);
    }

    @Test
    void ifconfigShowsThunderboltInterfacesAndAddresses() throws IOException {
        assertThat(run("studio-01", "sudo -n ifconfig en3 inet 169.254.12.1 netmask 255.255.0.0").exitCode()).isZero();
        String en3 = run("studio-01", "ifconfig en3").stdout();
        assertThat(en3).startsWith("en3: flags=8963<UP,BROADCAST,SMART,RUNNING,PROMISC,SIMPLEX,MULTICAST> mtu 1500\n")
                .contains("\tinet 169.254.12.1 netmask 0xffff0000 broadcast 169.254.255.255\n", "\tstatus: active\n");
        assertThat(run("studio-01", "ifconfig en4").stdout()).contains("\tstatus: inactive\n");
        assertThat(run("studio-01", "ifconfig").stdout()).contains("bridge0: flags=8863", "\tmember: en2 flags=3<LEARNING,DISCOVER>\n");
        assertThat(run("studio-01", "ifconfig bridge0").stdout()).containsPattern("\tinet 169\\.254\\.\\d+\\.\\d+ netmask 0xffff0000");
        assertThat(run("studio-02", "ifconfig en3").stdout()).doesNotContain("inet ");
        assertThat(run("studio-02", "sudo -n networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' off").exitCode()).isZero();
        assertThat(run("studio-02", "ifconfig en3").stdout()).containsPattern("\tinet 169\\.254\\.\\d+\\.\\d+ netmask 0xffff0000");
        assertThat(run("studio-02", "ifconfig bridge0").stdout()).contains("\tstatus: inactive\n").doesNotContain("member:");
    }

    private static List<String> names(JsonNode array) {
        List<String> names = new ArrayList<>();
        array.forEach(node -> names.add(node.get("_name").asText()));
        return names;
    }

    private static Set<String> keys(JsonNode node) {
        Set<String> keys = new TreeSet<>();
        node.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    private static Map<String, String> portMap(String output) {
        Map<String, String> map = new LinkedHashMap<>();
        String port = null;
        for (String line : output.split("\n")) {
            if (line.startsWith("Hardware Port: ")) {
                port = line.substring("Hardware Port: ".length());
            } else if (line.startsWith("Device: ") && port != null) {
                map.put(port, line.substring("Device: ".length()));
            }
        }
        return map;
    }
}
