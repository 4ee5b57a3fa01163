package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/** shutdown, reboot and softwareupdate: the programs that restart or power off the machine (after the exit status is sent). */
final class PowerPrograms implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("shutdown", "reboot", "softwareupdate");
    }

    @Override
    public Result run(Call call) {
        SimulatedFleet fleet = call.fleet();
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        boolean root = call.root();
        SimulatedMac.Snapshot state = call.state();
        Supplier<String> stdinLine = call.stdinLine();
        return switch (call.program()) {
            case "shutdown" -> shutdown(fleet, mac, args, root);
            case "reboot" -> root ? rebootNow(fleet, mac, "") : Result.fail(1, "reboot: Operation not permitted\n");
            case "softwareupdate" -> softwareupdate(fleet, mac, args, root, state, stdinLine);
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    private static Result shutdown(SimulatedFleet fleet, SimulatedMac mac, List<String> args, boolean root) {
        if (!root) {
            return Result.fail(1, "shutdown: NOT super-user\n");
        }
        if (args.contains("-r")) {
            return rebootNow(fleet, mac, "Shutdown NOW!\n");
        }
        if (args.contains("-h")) {
            return new Result("Shutdown NOW!\n", "", 0, () -> fleet.powerOff(mac.name()));
        }
        return Result.fail(1, "usage: shutdown [-] [-h [-u] [-n] | -r [-n] | -s | -k] time [warning-message ...]\n");
    }

    private static Result rebootNow(SimulatedFleet fleet, SimulatedMac mac, String message) {
        return new Result(message, "", 0, () -> fleet.reboot(mac.name()));
    }

    /**
     * softwareupdate: the --list format is from real outputs (SOURCES.md). On Apple silicon an OS update needs the
     * volume owner's credentials (--user NAME --stdinpass); without them the install fails.
     */
    private static Result softwareupdate(SimulatedFleet fleet, SimulatedMac mac, List<String> args, boolean root, SimulatedMac.Snapshot state, Supplier<String> stdinLine) {
        Optional<MacosRelease> available = fleet.availableUpdate(state.releaseAfterReboot() != null ? state.releaseAfterReboot() : state.release());
        if (args.contains("--list") || args.contains("-l")) {
            if (available.isEmpty()) {
                return new Result("Software Update Tool\n\nFinding available software\n", "No new software available.\n", 0, null);
            }
            MacosRelease next = available.get();
            return Result.ok("Software Update Tool\n\nFinding available software\nSoftware Update found the following new or updated software:\n"
                    + "* Label: " + label(next) + "\n"
                    + "\tTitle: macOS Tahoe " + next.version() + ", Version: " + next.version() + ", Size: 7381934KiB, Recommended: YES, Action: restart,\n");
        }
        if (args.contains("--install") || args.contains("-i")) {
            if (!root) {
                return Result.fail(1, "softwareupdate: must be run as root to install updates\n");
            }
            if (available.isEmpty()) {
                return new Result("Software Update Tool\n\nFinding available software\n", "No updates are available.\n", 0, null);
            }
            MacosRelease next = available.get();
            boolean named = args.contains("--all") || args.contains("-a") || args.contains(label(next)) || args.contains("--recommended") || args.contains("-r");
            if (!named) {
                return Result.fail(1, "Software Update Tool\n\nFinding available software\nNo such update\n");
            }
            String user = SettingsPrograms.valueAfter(args, "--user");
            String password = args.contains("--stdinpass") ? stdinLine.get() : null;
            if (user == null || password == null) {
                return new Result("Software Update Tool\n\nFinding available software\n\nDownloading macOS Tahoe " + next.version() + "\n",
                        "Error: On Apple silicon, installing macOS updates requires the credentials of a volume owner (--user and --stdinpass).\n", 1, null);
            }
            if (!mac.volumeOwnerPasswordMatches(user, password)) {
                return Result.fail(1, "Software Update Tool\n\nFinding available software\n\nError: Could not authenticate user " + user + " as a volume owner.\n");
            }
            mac.stageRelease(next);
            String out = "Software Update Tool\n\nFinding available software\n\nDownloading macOS Tahoe " + next.version()
                    + "\nDownloaded macOS Tahoe " + next.version() + "\nInstalling macOS Tahoe " + next.version() + "\nDone with macOS Tahoe " + next.version() + "\n";
            if (args.contains("--restart") || args.contains("-R")) {
                return new Result(out + "Restarting...\n", "", 0, () -> fleet.reboot(mac.name()));
            }
            return Result.ok(out + "You have installed one or more updates that requires that you restart your\ncomputer.  Please restart immediately.\n");
        }
        return Result.fail(1, "usage: softwareupdate <cmd> [<args> ...]\n");
    }

    private static String label(MacosRelease release) {
        return "macOS Tahoe " + release.version() + "-" + release.build();
    }
}
