package io.macfleet.health;

import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineSession;
import io.macfleet.ssh.PrivilegedProgram;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * Reads one Mac's health over its SSH session: six read-only commands, each parsed on its own, so that one
 * unreadable source (a garbled program, a missing sudo rule for powermetrics) costs only its figures.
 */
public final class MacHealthGatherer {

    /** Samplers that exist on Apple silicon (no smc there: asking for it makes powermetrics refuse the whole call). */
    public static final Command POWERMETRICS = Command.sudo(PrivilegedProgram.POWERMETRICS, "--samplers", "cpu_power,gpu_power,thermal",
            "-i", "1000", "-n", "1", "-f", "plist");
    public static final Command MEMORY_PRESSURE = Command.reading("memory_pressure");
    public static final Command WIRED_LIMIT = Command.reading("sysctl", "-n", "iogpu.wired_limit_mb");
    public static final Command BOOT_TIME = Command.reading("sysctl", "-n", "kern.boottime");
    public static final Command DIAGNOSTIC_REPORTS = Command.reading("ls", "-1", "/Library/Logs/DiagnosticReports");
    public static final Command RDMA_PORTS = Command.reading("ibv_devinfo");

    private final Clock clock;

    public MacHealthGatherer(Clock clock) {
        this.clock = clock;
    }

    public MacHealth gather(MachineSession session) {
        session.connect();
        Instant at = clock.instant();
        Map<String, String> unreadable = new LinkedHashMap<>();
        MacHealthParsers.Power power = read(session, POWERMETRICS, "powermetrics", unreadable, MacHealthParsers::powermetrics);
        MacHealthParsers.Memory memory = read(session, MEMORY_PRESSURE, "memory_pressure", unreadable, MacHealthParsers::memoryPressure);
        Long wiredLimit = memory == null ? null : read(session, WIRED_LIMIT, "iogpu.wired_limit_mb", unreadable,
                output -> MacHealthParsers.wiredLimitBytes(output, memory.physicalBytes()));
        Instant boot = read(session, BOOT_TIME, "kern.boottime", unreadable, MacHealthParsers::bootTime);
        List<String> panics = readAllowingMissing(session, DIAGNOSTIC_REPORTS, "DiagnosticReports", unreadable, MacHealthParsers::panicReports);
        List<MacHealth.RdmaPort> ports = readAllowingMissing(session, RDMA_PORTS, "ibv_devinfo", unreadable, MacHealthParsers::rdmaPorts);
        return new MacHealth(session.target().machine(), at,
                power == null || power.cpuDieCelsius() == null ? OptionalDouble.empty() : OptionalDouble.of(power.cpuDieCelsius()),
                power == null || power.gpuDieCelsius() == null ? OptionalDouble.empty() : OptionalDouble.of(power.gpuDieCelsius()),
                power == null ? OptionalDouble.empty() : OptionalDouble.of(power.packageWatts()),
                Optional.ofNullable(power).map(MacHealthParsers.Power::thermalPressure),
                memory == null ? OptionalDouble.empty() : OptionalDouble.of(memory.pressureRatio()),
                memory == null ? OptionalLong.empty() : OptionalLong.of(memory.wiredBytes()),
                wiredLimit == null ? OptionalLong.empty() : OptionalLong.of(wiredLimit),
                Optional.ofNullable(panics), Optional.ofNullable(boot), Optional.ofNullable(ports), unreadable);
    }

    private static <T> T read(MachineSession session, Command command, String source, Map<String, String> unreadable,
                              java.util.function.Function<String, T> parser) {
        CommandResult result = session.execute(command);
        if (!result.succeeded()) {
            unreadable.put(source, command.render() + ": " + failure(result));
            return null;
        }
        return parse(result.stdout(), command, source, unreadable, parser);
    }

    /**
     * A command whose non-zero exit means "nothing there": ls of a folder that does not exist yet (no reports), and
     * ibv_devinfo, which exits 255 with "No IB devices found" when RDMA is off and is missing before macOS 26.2.
     */
    private static <T> T readAllowingMissing(MachineSession session, Command command, String source, Map<String, String> unreadable,
                                             java.util.function.Function<String, T> parser) {
        CommandResult result;
        try {
            result = session.execute(command);
        } catch (RuntimeException e) {
            if (command != RDMA_PORTS) {
                throw e;
            }
            // ibv_devinfo hangs while RDMA is wedged (exo #1712): the other figures of this look still count.
            unreadable.put(source, command.render() + ": " + e.getMessage());
            return null;
        }
        if (result.exitSignal() != null || result.exitStatus() == null || result.truncated()) {
            unreadable.put(source, command.render() + ": " + failure(result));
            return null;
        }
        return parse(result.exitStatus() == 0 ? result.stdout() : "", command, source, unreadable, parser);
    }

    private static <T> T parse(String output, Command command, String source, Map<String, String> unreadable,
                               java.util.function.Function<String, T> parser) {
        try {
            return parser.apply(output);
        } catch (RuntimeException e) {
            unreadable.put(source, command.render() + ": " + e.getMessage());
            return null;
        }
    }

    private static String failure(CommandResult result) {
        String stderr = result.stderr().strip();
        String why = result.exitSignal() != null ? "signal " + result.exitSignal()
                : result.exitStatus() == null ? "no exit status" : "exit " + result.exitStatus();
        return stderr.isEmpty() ? why : why + " (" + (stderr.length() > 160 ? stderr.substring(0, 157) + "..." : stderr) + ")";
    }
}
