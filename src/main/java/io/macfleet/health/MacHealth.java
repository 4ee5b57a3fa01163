package io.macfleet.health;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * One look at a Mac's health: what powermetrics, memory_pressure, sysctl, the diagnostic reports folder and
 * ibv_devinfo said at {@code observedAt}. What could not be read is empty and named in {@code unreadable} (source to
 * reason); it is never a zero.
 *
 * @param cpuTemperatureCelsius CPU die temperature, only where powermetrics' smc sampler answers (not Apple silicon)
 * @param gpuTemperatureCelsius GPU die temperature, likewise
 * @param packagePowerWatts     CPU + GPU + ANE power (powermetrics' combined_power)
 * @param thermalPressure       powermetrics' thermal pressure word (Nominal, Moderate, Heavy, Trapping, Sleeping)
 * @param memoryPressureRatio   0..1: 1 - memory_pressure's "System-wide memory free percentage" / 100
 * @param wiredMemoryBytes      "Pages wired down" times the page size
 * @param wiredLimitBytes       the GPU's wired-memory limit: iogpu.wired_limit_mb, or macOS' default when it is 0
 * @param panicReports          names of the kernel panic reports in /Library/Logs/DiagnosticReports
 * @param bootTime              kern.boottime
 * @param rdmaPorts             RDMA ports and whether each is PORT_ACTIVE
 */
public record MacHealth(String machine, Instant observedAt, OptionalDouble cpuTemperatureCelsius, OptionalDouble gpuTemperatureCelsius,
                        OptionalDouble packagePowerWatts, Optional<String> thermalPressure, OptionalDouble memoryPressureRatio,
                        OptionalLong wiredMemoryBytes, OptionalLong wiredLimitBytes, Optional<List<String>> panicReports,
                        Optional<Instant> bootTime, Optional<List<RdmaPort>> rdmaPorts, Map<String, String> unreadable) {

    public MacHealth {
        unreadable = Map.copyOf(unreadable);
        panicReports = panicReports.map(List::copyOf);
        rdmaPorts = rdmaPorts.map(List::copyOf);
    }

    /** One port of an RDMA device as ibv_devinfo lists it. */
    public record RdmaPort(String device, int port, String state) {
        public boolean up() {
            return "PORT_ACTIVE".equals(state);
        }
    }

    /** Thermal pressure as a number for alerting: 0 Nominal, 1 Moderate, 2 Heavy, 3 Trapping, 4 Sleeping. */
    public OptionalDouble thermalPressureLevel() {
        return thermalPressure.map(MacHealth::level).orElse(OptionalDouble.empty());
    }

    private static OptionalDouble level(String word) {
        return switch (word) {
            case "Nominal" -> OptionalDouble.of(0);
            case "Moderate", "Fair" -> OptionalDouble.of(1);
            case "Heavy", "Serious" -> OptionalDouble.of(2);
            case "Trapping", "Critical" -> OptionalDouble.of(3);
            case "Sleeping" -> OptionalDouble.of(4);
            default -> OptionalDouble.empty();
        };
    }
}
