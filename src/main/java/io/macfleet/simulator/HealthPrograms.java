package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/**
 * What the health gathering asks a Mac: {@code powermetrics} (root, plist format) and {@code memory_pressure}. The
 * layouts follow real captures kept under src/test/resources/macos-samples/ (see SOURCES.md there): powermetrics of
 * an Apple-silicon Mac on macOS 26.2 (no smc sampler, so no die temperatures; power in milliwatts, thermal pressure
 * as a word) and memory_pressure of a 32 GB Apple-silicon Mac (trailing spaces after the numbers, as macOS prints
 * them). Figures are the simulation's: a serving Mac draws about 40 W, an overheating one (fault {@code overheat})
 * 189 W under heavy thermal pressure; fault {@code wired-memory-high} wires 74% of memory.
 */
final class HealthPrograms implements SimulatedProgram {

    static final String DIAGNOSTIC_REPORTS = "/Library/Logs/DiagnosticReports";

    @Override
    public List<String> names() {
        return List.of("powermetrics", "memory_pressure");
    }

    @Override
    public Result run(Call call) {
        return switch (call.program()) {
            case "powermetrics" -> powermetrics(call);
            case "memory_pressure" -> Result.ok(memoryPressure(call.mac(), call.state()));
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    private static Result powermetrics(Call call) {
        if (!call.root()) {
            return Result.fail(1, "powermetrics must be invoked as the superuser\n");
        }
        List<String> args = call.arguments();
        int samplers = Math.max(args.indexOf("--samplers"), args.indexOf("-s"));
        if (samplers >= 0 && samplers + 1 < args.size()) {
            for (String sampler : args.get(samplers + 1).split(",")) {
                if (!List.of("cpu_power", "gpu_power", "thermal", "tasks", "ane_power", "network", "disk", "interrupts", "battery").contains(sampler)) {
                    // Apple silicon has no smc sampler; powermetrics refuses an unknown one before sampling.
                    return Result.fail(1, "powermetrics: unrecognized sampler: " + sampler + "\n");
                }
            }
        }
        boolean hot = call.mac().faults().overheating();
        double cpu = hot ? 21034.5 : 8211.25;
        double gpu = hot ? 167912.0 : 31488.7;
        SimulatedMac.Snapshot state = call.state();
        String timestamp = DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        String plist = """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                <key>is_delta</key><true/>
                <key>elapsed_ns</key><integer>1004262167</integer>
                <key>hw_model</key><string>%s</string>
                <key>kern_osversion</key><string>%s</string>
                <key>kern_bootargs</key><string></string>
                <key>kern_boottime</key><integer>%d</integer>
                <key>timestamp</key><date>%s</date>
                <key>processor</key>
                <dict>
                <key>cpu_energy</key>
                <integer>%d</integer>
                <key>cpu_power</key>
                <real>%s</real>
                <key>gpu_energy</key>
                <integer>%d</integer>
                <key>gpu_power</key>
                <real>%s</real>
                <key>ane_energy</key>
                <integer>0</integer>
                <key>ane_power</key>
                <real>0</real>
                <key>combined_power</key>
                <real>%s</real>
                </dict>
                <key>thermal_pressure</key><string>%s</string>
                <key>gpu</key>
                <dict>
                <key>freq_hz</key><real>%s</real>
                <key>idle_ns</key><integer>%d</integer>
                <key>idle_ratio</key><real>%s</real>
                <key>gpu_energy</key><integer>%d</integer>
                </dict>
                </dict>
                </plist>
                """.formatted(state.spec().modelIdentifier(), state.release().build(), state.bootTime().getEpochSecond(), timestamp,
                Math.round(cpu * 1.004), number(cpu), Math.round(gpu * 1.004), number(gpu), number(cpu + gpu), hot ? "Heavy" : "Nominal",
                hot ? "1398" : "1278", hot ? 20085243 : 311321272, hot ? "0.02" : "0.31", Math.round(gpu * 1.004));
        // powermetrics ends each plist sample with a NUL byte (asitop and others split the stream on it)
        return Result.ok(plist + "\0");
    }

    private static String number(double value) {
        return String.format(Locale.ROOT, "%.6g", value).replaceFirst("\\.?0+$", "");
    }

    static String memoryPressure(SimulatedMac mac, SimulatedMac.Snapshot state) {
        long pageSize = 16384;
        long pages = state.spec().memoryBytes() / pageSize;
        double wiredFraction = mac.faults().wiredFraction() >= 0 ? mac.faults().wiredFraction() : 0.061;
        long wired = Math.round(pages * wiredFraction);
        int freePercent = wiredFraction > 0.5 ? 21 : 86;
        long free = Math.round(pages * 0.062);
        return """
                The system has %d (%d pages with a page size of %d).

                Stats:\s
                Pages free: %d\s
                Pages purgeable: 21054\s
                Pages purged: 2022830\s

                Swap I/O:
                Swapins: 0\s
                Swapouts: 0\s

                Page Q counts:
                Pages active: %d\s
                Pages inactive: %d\s
                Pages speculative: 21899\s
                Pages throttled: 0\s
                Pages wired down: %d\s

                Compressor Stats:
                Pages used by compressor: 153447\s
                Pages decompressed: 5343241\s
                Pages compressed: 12544038\s

                File I/O:
                Pageins: 35398821\s
                Pageouts: 847858\s

                System-wide memory free percentage: %d%%

                """.formatted(state.spec().memoryBytes(), pages, pageSize, free, Math.max(0, (pages - wired - free) / 2),
                Math.max(0, (pages - wired - free) / 2), wired, freePercent);
    }

    /**
     * A kernel panic's report as macOS leaves it after the reboot: {@code panic-full-YYYY-MM-DD-HHMMSS.0002.panic} in
     * /Library/Logs/DiagnosticReports (the name as on Apple-silicon Macs; the content is a short stand-in).
     *
     * @return the report's path on the Mac
     */
    static String writePanicReport(SimulatedMac mac) {
        Instant now = Instant.now();
        String name = "panic-full-" + DateTimeFormatter.ofPattern("yyyy-MM-dd-HHmmss", Locale.ROOT).withZone(ZoneOffset.UTC).format(now)
                + "." + String.format(Locale.ROOT, "%04d", (int) (now.getNano() / 1_000_000 % 10_000)) + ".panic";
        String path = DIAGNOSTIC_REPORTS + "/" + name;
        try {
            Path file = mac.resolve(path);
            Files.createDirectories(file.getParent());
            Files.writeString(file, "{\"bug_type\":\"210\",\"timestamp\":\"" + now + "\",\"os_version\":\"macOS\"}\n"
                    + "{\"panicString\":\"panic(cpu 0 caller 0xfffffe0012345678): simulated by macfleet's fault kernel-panic\"}\n");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the panic report on " + mac.name(), e);
        }
        return path;
    }
}
