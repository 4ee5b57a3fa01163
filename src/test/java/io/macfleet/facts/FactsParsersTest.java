package io.macfleet.facts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * Parsers against real output: the samples under src/test/resources/macos-samples (sources in its SOURCES.md).
 */
class FactsParsersTest {

    static String sample(String path) {
        try (java.io.InputStream input = FactsParsersTest.class.getResourceAsStream("/macos-samples/" + path)) {
            if (input == null) {
                throw new IllegalStateException("no sample " + path);
            }
            return new String(input.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void hardwareOverviewOfAMacStudio() {
        HardwareOverview overview = HardwareParser.parse(sample("system_profiler-SPHardwareDataType/mac-studio-m2-ultra-masked.json"));

        assertThat(overview).isEqualTo(new HardwareOverview("Mac14,14", "Mac Studio", "Apple M2 Ultra", 24, OptionalInt.of(16), OptionalInt.of(8),
                64L << 30, "XXXXXXXXXX", "00000000-1111-2222-3333-444444444444"));
        assertThat(overview.memoryGigabytes()).isEqualTo(64);
    }

    @Test
    void gpuCoresOfAHeadlessMac() {
        assertThat(HardwareParser.gpuCores(sample("system_profiler-SPDisplaysDataType/m3-max-no-display.json"))).isEqualTo(40);
        assertThatThrownBy(() -> HardwareParser.gpuCores("{\"SPDisplaysDataType\" : [ {\"sppci_device_type\" : \"spdisplays_gpu\", \"sppci_cores\" : \"many\"} ]}"))
                .hasMessage("system_profiler -json SPDisplaysDataType: SPDisplaysDataType[0].sppci_cores: expected a number, got 'many'");
        assertThatThrownBy(() -> HardwareParser.gpuCores("{\"SPDisplaysDataType\" : [ ]}"))
                .hasMessage("system_profiler -json SPDisplaysDataType: no GPU entry with sppci_cores (expected on Apple silicon)");
    }

    @Test
    void hardwareOverviewErrorsNameTheField() {
        assertThatThrownBy(() -> HardwareParser.parse("{\"SPHardwareDataType\":[{\"machine_model\":\"Mac15,14\",\"number_processors\":\"many\"}]}"))
                .hasMessage("system_profiler -json SPHardwareDataType: SPHardwareDataType[0].number_processors: expected 'proc TOTAL:PERFORMANCE:EFFICIENCY', got 'many'");
        assertThatThrownBy(() -> HardwareParser.parse("[]"))
                .hasMessage("system_profiler -json SPHardwareDataType: expected SPHardwareDataType with one hardware overview object");
    }

    @Test
    void bootstrapTokenOfAServerWithoutSupportHasOnlyOneLine() {
        BootstrapTokenStatus status = BootstrapTokenStatus.parse(sample("profiles/status-bootstraptoken-server-unsupported.txt"));

        assertThat(status).isEqualTo(new BootstrapTokenStatus(false, false));
        assertThat(status.escrowApplicable()).isFalse();
        assertThatThrownBy(() -> BootstrapTokenStatus.parse("profiles: Bootstrap Token supported on server: YES\n"))
                .hasMessageContaining("escrowed to server");
    }

    @Test
    void rdmaPortStatesFromIbvDevinfo() {
        assertThat(SimpleOutputParsers.rdmaPortStates(sample("ibv_devinfo/macbook-pro-three-ports-down.txt")))
                .containsExactly(java.util.Map.entry("rdma_en1", "PORT_DOWN"), java.util.Map.entry("rdma_en6", "PORT_DOWN"),
                        java.util.Map.entry("rdma_en2", "PORT_DOWN"));
        assertThat(SimpleOutputParsers.rdmaPortStates(sample("ibv_devinfo/linux-mlx4-two-ports.txt")))
                .containsExactly(java.util.Map.entry("mlx4_1", "PORT_ACTIVE"));
        assertThat(SimpleOutputParsers.rdmaPortStates("")).isEmpty();
        assertThatThrownBy(() -> SimpleOutputParsers.rdmaPortStates("zsh: command not found: ibv_devinfo\n"))
                .hasMessage("ibv_devinfo: no 'hca_id:' line, got 'zsh: command not found: ibv_devinfo'");
        assertThatThrownBy(() -> SimpleOutputParsers.rdmaPortStates("hca_id:\trdma_en3\n\t\tport:\t1\n\t\t\tstate:\t\t\tbroken\n"))
                .hasMessage("ibv_devinfo: line 3: expected a port state such as PORT_ACTIVE (4), got 'state:\t\t\tbroken'");
    }

    @Test
    void softwareVersionMemoryAndBootstrapToken() {
        assertThat(SimpleOutputParsers.softwareVersion(sample("sw_vers/macos-26.2.txt")))
                .isEqualTo(new SoftwareVersion("macOS", "26.2", "25C56"));
        assertThat(SimpleOutputParsers.memorySize(sample("sysctl/hw.memsize-m3-ultra-512gb.txt"))).isEqualTo(512L << 30);
        assertThat(BootstrapTokenStatus.parse(sample("profiles/status-bootstraptoken-escrowed.txt")))
                .isEqualTo(new BootstrapTokenStatus(true, true));
        assertThatThrownBy(() -> SimpleOutputParsers.softwareVersion("ProductVersion:\t\tbanana\nBuildVersion:\t\t1\n"))
                .hasMessage("sw_vers: ProductVersion 'banana' is not a version number");
        assertThatThrownBy(() -> SimpleOutputParsers.memorySize("zsh: command not found: sysctl"))
                .hasMessage("sysctl hw.memsize: expected 'hw.memsize: BYTES', got 'zsh: command not found: sysctl'");
    }

    @Test
    void gpuWiredLimit() {
        assertThat(SimpleOutputParsers.wiredLimitMegabytes(sample("sysctl/iogpu.wired_limit_mb-unset.txt"))).hasValue(0);
        assertThat(SimpleOutputParsers.wiredLimitMegabytes("iogpu.wired_limit_mb: 491520\n")).hasValue(491_520);
        assertThat(SimpleOutputParsers.wiredLimitMegabytes("26000\n")).hasValue(26_000);
        // The gatherer records an exit 1 ("unknown oid" on a macOS before 14) as empty output: not gathered.
        assertThat(SimpleOutputParsers.wiredLimitMegabytes("")).isEmpty();
        assertThatThrownBy(() -> SimpleOutputParsers.wiredLimitMegabytes("iogpu.wired_limit_mb: lots"))
                .hasMessage("sysctl iogpu.wired_limit_mb: expected 'iogpu.wired_limit_mb: MEGABYTES', got 'iogpu.wired_limit_mb: lots'");
    }

    @Test
    void rdmaDevicesTable() {
        assertThat(SimpleOutputParsers.rdmaDevices(sample("ibv_devices/macbook-pro-rdma-enabled.txt"))).containsExactly("rdma_en1", "rdma_en6", "rdma_en2");
        assertThat(SimpleOutputParsers.rdmaDevices(sample("ibv_devices/rdma-disabled.txt"))).isEmpty();
        assertThatThrownBy(() -> SimpleOutputParsers.rdmaDevices("    device          \t   node GUID\n    ------          \t----------------\n    %%%garbage\n"))
                .hasMessage("ibv_devices: line 3: expected an RDMA device such as rdma_en3, got '%%%garbage'");
    }

    @Test
    void hardwarePortsOfAnM3UltraMacStudio() {
        HardwarePorts ports = HardwarePortsParser.parse(sample("networksetup-listallhardwareports/mac-studio-m3-ultra-trimmed.txt"));

        assertThat(ports.thunderboltInterface(1)).contains("en2");
        assertThat(ports.thunderboltInterface(6)).contains("en7");
        assertThat(ports.thunderboltPortOf("en4")).contains(3);
        assertThat(ports.devicesByPort()).containsEntry("Ethernet Adapter (en8)", "en8");
        assertThatThrownBy(() -> HardwarePortsParser.parse("Hardware Port: Thunderbolt 1\nHardware Port: Thunderbolt 2\nDevice: en3\n"))
                .hasMessage("networksetup -listallhardwareports: line 1: hardware port 'Thunderbolt 1' has no Device: line");
    }

    @Test
    void hardwarePortsOfAMacBookAreNotInOrder() {
        HardwarePorts ports = HardwarePortsParser.parse(sample("networksetup-listallhardwareports/macbook-pro-m5-max.txt"));

        assertThat(ports.thunderboltInterface(1)).contains("en1");
        assertThat(ports.thunderboltInterface(2)).contains("en6");
        assertThat(ports.thunderboltInterface(3)).contains("en2");
        assertThat(ports.devicesByPort()).containsEntry("Thunderbolt Bridge", "bridge0");
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
