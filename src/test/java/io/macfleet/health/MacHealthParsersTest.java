package io.macfleet.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The health parsers against real captures (src/test/resources/macos-samples/SOURCES.md, "Mac health"). */
class MacHealthParsersTest {

    static String sample(String path) throws IOException {
        try (InputStream in = MacHealthParsersTest.class.getResourceAsStream("/macos-samples/" + path)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void powermetricsOfAnAppleSiliconMacGivesPackagePowerAndThermalPressureButNoTemperature() throws IOException {
        MacHealthParsers.Power power = MacHealthParsers.powermetrics(sample("powermetrics/mac16-5-macos-26-2-trimmed.plist") + "\0");
        assertThat(power.packageWatts()).isCloseTo(3.24807, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(power.thermalPressure()).isEqualTo("Nominal");
        assertThat(power.cpuDieCelsius()).isNull();
        assertThat(power.gpuDieCelsius()).isNull();
    }

    @Test
    void powermetricsWithAnSmcDictionaryGivesDieTemperatures() {
        String intel = """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict>
                <key>processor</key><dict><key>cpu_power</key><real>2450.0</real><key>gpu_power</key><real>512.0</real></dict>
                <key>smc</key><dict><key>cpu_die</key><real>67.0</real><key>gpu_die</key><real>59.5</real></dict>
                </dict></plist>
                """;
        MacHealthParsers.Power power = MacHealthParsers.powermetrics(intel);
        assertThat(power.packageWatts()).isCloseTo(2.962, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(power.cpuDieCelsius()).isEqualTo(67.0);
        assertThat(power.gpuDieCelsius()).isEqualTo(59.5);
        assertThatThrownBy(() -> MacHealthParsers.powermetrics("powermetrics must be invoked as the superuser"))
                .hasMessageContaining("expected a plist");
        assertThatThrownBy(() -> MacHealthParsers.powermetrics("<plist version=\"1.0\"><dict></dict></plist>"))
                .hasMessageContaining("combined_power");
    }

    @Test
    void memoryPressureGivesWiredBytesAndPressure() throws IOException {
        MacHealthParsers.Memory memory = MacHealthParsers.memoryPressure(sample("memory_pressure/apple-silicon-32gb.txt"));
        assertThat(memory.physicalBytes()).isEqualTo(34359738368L);
        assertThat(memory.wiredBytes()).isEqualTo(127722L * 16384);
        assertThat(memory.freePercent()).isEqualTo(86);
        assertThat(memory.pressureRatio()).isEqualTo(0.14, org.assertj.core.data.Offset.offset(1e-9));
        assertThatThrownBy(() -> MacHealthParsers.memoryPressure("The system has 10 pages.\nSystem-wide memory free percentage: 64%\n"))
                .hasMessageContaining("Pages wired down");
    }

    @Test
    void theWiredLimitIsTheSysctlOrMacosDefaultWhenZero() {
        long gb = 1024L * 1024 * 1024;
        assertThat(MacHealthParsers.wiredLimitBytes("458752\n", 512 * gb)).isEqualTo(458752L * 1024 * 1024);
        assertThat(MacHealthParsers.wiredLimitBytes("0\n", 512 * gb)).isEqualTo(384 * gb);
        assertThat(MacHealthParsers.wiredLimitBytes("0\n", 36 * gb)).isEqualTo(24 * gb);
        assertThatThrownBy(() -> MacHealthParsers.wiredLimitBytes("sysctl: unknown oid 'iogpu.wired_limit_mb'", 36 * gb))
                .hasMessageContaining("expected a number of megabytes");
    }

    @Test
    void bootTimePanicReportsAndRdmaPorts() throws IOException {
        assertThat(MacHealthParsers.bootTime(sample("sysctl/kern-boottime.txt"))).isEqualTo(Instant.ofEpochSecond(1232765114, 823118000));
        assertThat(MacHealthParsers.panicReports("Analytics-2026-11-27-101010.core_analytics\npanic-full-2026-11-28-120103.0002.panic\n"
                + "JetsamEvent-2026-11-20-080000.ips\nKernel-2024-01-15-101112.panic\n"))
                .containsExactly("Kernel-2024-01-15-101112.panic", "panic-full-2026-11-28-120103.0002.panic");
        List<MacHealth.RdmaPort> mac = MacHealthParsers.rdmaPorts(sample("ibv_devinfo/macbook-pro-three-ports-down.txt"));
        assertThat(mac).extracting(MacHealth.RdmaPort::device).startsWith("rdma_en1", "rdma_en6");
        assertThat(mac).allSatisfy(port -> assertThat(port.port()).isEqualTo(1));
        assertThat(mac.getFirst().up()).isFalse();
        List<MacHealth.RdmaPort> linux = MacHealthParsers.rdmaPorts(sample("ibv_devinfo/linux-mlx4-two-ports.txt"));
        assertThat(linux).extracting(port -> port.port() + ":" + port.state()).containsExactly("1:PORT_ACTIVE", "2:PORT_DOWN");
        assertThat(MacHealthParsers.rdmaPorts("")).isEmpty();
    }
}
