package io.macfleet.runtime;

import io.macfleet.deployment.LaunchDaemon;
import io.macfleet.deployment.LaunchDaemonPlist;
import io.macfleet.deployment.LaunchdService;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineSession;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Looks at the daemons of a runtime on one Mac: launchd's print, the installed plist, the probe it implies, the log. */
final class RuntimeProbe {

    static final int LOG_LINES = 200;

    private RuntimeProbe() {
    }

    static List<RuntimeService.DaemonStatus> look(MachineSession machine, int rank, InferenceRuntime runtime) {
        String name = machine.target().machine();
        List<RuntimeService.DaemonStatus> statuses = new ArrayList<>();
        for (String label : runtime.labels()) {
            LaunchdService launchd = RuntimeDeployer.launchd(machine, label);
            CommandResult plist = machine.execute(Command.reading("cat", LaunchDaemon.DAEMON_DIRECTORY + label + ".plist"));
            if (!plist.succeeded() && !launchd.loaded()) {
                continue;
            }
            Optional<LaunchDaemon> installed = Optional.empty();
            try {
                installed = plist.succeeded() ? Optional.of(LaunchDaemonPlist.parse(plist.stdout())) : Optional.empty();
            } catch (IOException | IllegalArgumentException unreadable) {
                // The probe stays unknown; launchd's view is still shown.
            }
            Optional<RuntimePlan.Probe> probe = installed.flatMap(runtime::probe);
            Optional<String> problem = probe.map(RuntimeDeployer::check).orElse(Optional.of("no probe: the installed plist is unreadable"));
            Optional<String> transport = Optional.empty();
            if (installed.isPresent()) {
                String log = tail(machine, installed.get().standardOutPath()) + "\n" + tail(machine, installed.get().standardErrorPath());
                transport = runtime.transport(label, log);
            }
            statuses.add(new RuntimeService.DaemonStatus(name, rank, label, launchd, probe.map(Object::toString).orElse("-"), problem, transport,
                    Optional.empty()));
        }
        return statuses;
    }

    /** Lines read from the end of a daemon's logs when looking for RDMA faults: its last start is near the end. */
    static final int FAULT_LINES = 60;

    private static final List<String> STREAMS = List.of(".err.log", ".out.log");

    /** How many lines each log of a daemon has now ({@code wc -l}), by path; a log that cannot be read is left out. */
    static java.util.Map<String, Long> logLines(MachineSession machine, String label) {
        java.util.Map<String, Long> lines = new java.util.HashMap<>();
        for (String stream : STREAMS) {
            String path = LaunchDaemon.LOG_DIRECTORY + label + stream;
            CommandResult count = machine.execute(Command.reading("wc", "-l", path));
            String first = count.succeeded() ? count.stdout().strip().split("\\s+")[0] : "";
            if (first.matches("\\d+")) {
                lines.put(path, Long.parseLong(first));
            }
        }
        return lines;
    }

    /**
     * The runtime's RDMA fault lines in a daemon's logs written since {@code seen} (each log's line count when the
     * cluster last served: an incident that was recovered from stays in the log and must not count again); for a log
     * not counted then, the lines since the runtime's start line in the last {@value #FAULT_LINES} (all of them when the
     * runtime has none).
     */
    static List<String> rdmaFaults(MachineSession machine, String label, InferenceRuntime runtime, java.util.Map<String, Long> seen) {
        List<String> found = new ArrayList<>();
        java.util.Map<String, Long> now = seen.isEmpty() ? java.util.Map.of() : logLines(machine, label);
        for (String stream : STREAMS) {
            String path = LaunchDaemon.LOG_DIRECTORY + label + stream;
            long count = FAULT_LINES;
            boolean sinceServing = seen.containsKey(path) && now.containsKey(path) && now.get(path) >= seen.get(path);
            if (sinceServing) {
                count = Math.min(FAULT_LINES, now.get(path) - seen.get(path));
                if (count == 0) {
                    continue;
                }
            }
            CommandResult tail = machine.execute(Command.reading("tail", "-n", Long.toString(count), path));
            if (!tail.succeeded()) {
                continue;
            }
            List<String> lines = tail.stdout().lines().toList();
            int start = 0;
            for (int index = 0; index < lines.size() && !sinceServing; index++) {
                int line = index;
                if (runtime.startLine(label).map(pattern -> pattern.matcher(lines.get(line)).find()).orElse(false)) {
                    start = index;
                }
            }
            lines.subList(start, lines.size()).stream()
                    .filter(line -> runtime.rdmaFaultLines().stream().anyMatch(pattern -> pattern.matcher(line).find()))
                    .map(String::strip).distinct().forEach(found::add);
        }
        return found;
    }

    static String tail(MachineSession machine, String path) {
        CommandResult tail = machine.execute(Command.reading("tail", "-n", Integer.toString(LOG_LINES), path));
        return tail.succeeded() ? tail.stdout() : "";
    }
}
