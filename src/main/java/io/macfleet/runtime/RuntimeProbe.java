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

    static String tail(MachineSession machine, String path) {
        CommandResult tail = machine.execute(Command.reading("tail", "-n", Integer.toString(LOG_LINES), path));
        return tail.succeeded() ? tail.stdout() : "";
    }
}
