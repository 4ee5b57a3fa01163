package io.macfleet.facts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The output of every facts command taken from the stored macOS samples (src/test/resources/macos-samples): real
 * captures from several Macs, so the combination is not one machine, but each output is a real format.
 */
public final class MacosSamples {

    private MacosSamples() {
    }

    public static Map<String, String> outputs() {
        Map<String, String> outputs = new LinkedHashMap<>();
        outputs.put(FactsGatherer.SOFTWARE_VERSION.render(), read("sw_vers/macos-26.2.txt"));
        outputs.put(FactsGatherer.HARDWARE.render(), read("system_profiler-SPHardwareDataType/mac-studio-m2-ultra-masked.json"));
        outputs.put(FactsGatherer.DISPLAYS.render(), read("system_profiler-SPDisplaysDataType/m3-max-no-display.json"));
        outputs.put(FactsGatherer.THUNDERBOLT.render(), read("system_profiler-SPThunderboltDataType/mac-studio-m3-ultra-omlx.json"));
        outputs.put(FactsGatherer.HARDWARE_PORTS.render(), read("networksetup-listallhardwareports/mac-studio-m3-ultra-trimmed.txt"));
        outputs.put(FactsGatherer.IFCONFIG.render(), read("ifconfig/mac-studio-thunderbolt-bridge.txt"));
        outputs.put(FactsGatherer.RDMA_STATUS.render(), read("rdma_ctl/status-enabled.txt"));
        outputs.put(FactsGatherer.RDMA_DEVICES.render(), read("ibv_devices/macbook-pro-rdma-enabled.txt"));
        outputs.put(FactsGatherer.BOOTSTRAP_TOKEN.render(), read("profiles/status-bootstraptoken-escrowed.txt"));
        outputs.put(FactsGatherer.MEMORY.render(), read("sysctl/hw.memsize-m3-ultra-512gb.txt"));
        outputs.put(FactsGatherer.WIRED_LIMIT.render(), read("sysctl/iogpu.wired_limit_mb-unset.txt"));
        outputs.put(FactsGatherer.UPTIME.render(), read("uptime/macos-26.2-hours.txt"));
        outputs.put(FactsGatherer.DISK_FREE.render(), read("df/df-k-root.txt"));
        return outputs;
    }

    static String read(String path) {
        try (InputStream in = MacosSamples.class.getResourceAsStream("/macos-samples/" + path)) {
            if (in == null) {
                throw new IllegalStateException("missing sample " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
