package io.macfleet.facts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * Parsers against the shapes of real output (the samples and their sources are under
 * src/test/resources/macos-samples once the simulator lands; the strings here are copies of them).
 */
class FactsParsersTest {

    @Test
    void hardwareOverviewOfAMacStudio() {
        HardwareOverview overview = HardwareParser.parse("""
                {
                  "SPHardwareDataType" : [
                    {
                      "_name" : "hardware_overview",
                      "activation_lock_status" : "activation_lock_enabled",
                      "boot_rom_version" : "18000.121.3",
                      "chip_type" : "Apple M2 Ultra",
                      "machine_model" : "Mac14,14",
                      "machine_name" : "Mac Studio",
                      "model_number" : "Z180000AEBZ/A",
                      "number_processors" : "proc 24:16:8:0",
                      "os_loader_version" : "18000.121.3",
                      "physical_memory" : "64 GB",
                      "platform_UUID" : "00000000-1111-2222-3333-444444444444",
                      "provisioning_UDID" : "00000000-0000000000000000",
                      "serial_number" : "XXXXXXXXXX"
                    }
                  ]
                }""");

        assertThat(overview).isEqualTo(new HardwareOverview("Mac14,14", "Mac Studio", "Apple M2 Ultra", 24, OptionalInt.of(16), OptionalInt.of(8),
                64L << 30, "XXXXXXXXXX", "00000000-1111-2222-3333-444444444444"));
        assertThat(overview.memoryGigabytes()).isEqualTo(64);
    }

    @Test
    void hardwareOverviewErrorsNameTheField() {
        assertThatThrownBy(() -> HardwareParser.parse("{\"SPHardwareDataType\":[{\"machine_model\":\"Mac15,14\",\"number_processors\":\"many\"}]}"))
                .hasMessage("system_profiler -json SPHardwareDataType: SPHardwareDataType[0].number_processors: expected 'proc TOTAL:PERFORMANCE:EFFICIENCY', got 'many'");
        assertThatThrownBy(() -> HardwareParser.parse("[]"))
                .hasMessage("system_profiler -json SPHardwareDataType: expected SPHardwareDataType with one hardware overview object");
    }

    @Test
    void softwareVersionMemoryAndBootstrapToken() {
        assertThat(SimpleOutputParsers.softwareVersion("ProductName:\t\tmacOS\nProductVersion:\t\t26.2\nBuildVersion:\t\t25C56\n"))
                .isEqualTo(new SoftwareVersion("macOS", "26.2", "25C56"));
        assertThat(SimpleOutputParsers.memorySize("hw.memsize: 549755813888\n")).isEqualTo(512L << 30);
        assertThat(BootstrapTokenStatus.parse("profiles: Bootstrap Token supported on server: YES\nprofiles: Bootstrap Token escrowed to server: YES\n"))
                .isEqualTo(new BootstrapTokenStatus(true, true));
        assertThatThrownBy(() -> SimpleOutputParsers.softwareVersion("ProductVersion:\t\tbanana\nBuildVersion:\t\t1\n"))
                .hasMessage("sw_vers: ProductVersion 'banana' is not a version number");
        assertThatThrownBy(() -> SimpleOutputParsers.memorySize("zsh: command not found: sysctl"))
                .hasMessage("sysctl hw.memsize: expected 'hw.memsize: BYTES', got 'zsh: command not found: sysctl'");
    }

    @Test
    void rdmaDevicesTable() {
        assertThat(SimpleOutputParsers.rdmaDevices("""
                    device          \t   node GUID
                    ------          \t----------------
                    rdma_en1        \t0000000000000001
                    rdma_en6        \t0000000000000002
                    rdma_en2        \t0000000000000003
                """)).containsExactly("rdma_en1", "rdma_en6", "rdma_en2");
        assertThat(SimpleOutputParsers.rdmaDevices("    device          \t   node GUID\n    ------          \t----------------\n")).isEmpty();
        assertThatThrownBy(() -> SimpleOutputParsers.rdmaDevices("    device          \t   node GUID\n    ------          \t----------------\n    %%%garbage\n"))
                .hasMessage("ibv_devices: line 3: expected an RDMA device such as rdma_en3, got '%%%garbage'");
    }

    @Test
    void hardwarePortsOfAnM3UltraMacStudio() {
        String output = """

                Hardware Port: Ethernet
                Device: en0

                Hardware Port: Ethernet Adapter (en8)
                Device: en8

                Hardware Port: Wi-Fi
                Device: en1

                Hardware Port: Thunderbolt 1
                Device: en2

                Hardware Port: Thunderbolt 2
                Device: en3

                Hardware Port: Thunderbolt 3
                Device: en4

                Hardware Port: Thunderbolt 4
                Device: en5

                Hardware Port: Thunderbolt 5
                Device: en6

                Hardware Port: Thunderbolt 6
                Device: en7

                VLAN Configurations
                ===================
                """;
        HardwarePorts ports = HardwarePortsParser.parse(output);

        assertThat(ports.thunderboltInterface(1)).contains("en2");
        assertThat(ports.thunderboltInterface(6)).contains("en7");
        assertThat(ports.thunderboltPortOf("en4")).contains(3);
        assertThat(ports.devicesByPort()).containsEntry("Ethernet Adapter (en8)", "en8");
        assertThatThrownBy(() -> HardwarePortsParser.parse("Hardware Port: Thunderbolt 1\nHardware Port: Thunderbolt 2\nDevice: en3\n"))
                .hasMessage("networksetup -listallhardwareports: line 1: hardware port 'Thunderbolt 1' has no Device: line");
    }

    @Test
    void bridgeStateFromIfconfig() {
        String up = "bridge0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n\tmember: en2 flags=3<LEARNING,DISCOVER>\n\tstatus: active\nen0: flags=8863<UP> mtu 1500\n";
        String down = "bridge0: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n\tstatus: inactive\n";
        assertThat(SimpleOutputParsers.bridgeActive(up)).isTrue();
        assertThat(SimpleOutputParsers.bridgeActive(down)).isFalse();
        assertThat(SimpleOutputParsers.bridgeActive("en0: flags=8863<UP> mtu 1500\n")).isFalse();
    }
}
