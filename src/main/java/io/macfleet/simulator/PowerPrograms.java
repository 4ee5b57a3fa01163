package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.util.List;

/** shutdown and reboot: the programs that restart or power off the machine (after the exit status is sent). softwareupdate is in UpdatePrograms. */
final class PowerPrograms implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("shutdown", "reboot");
    }

    @Override
    public Result run(Call call) {
        SimulatedFleet fleet = call.fleet();
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        boolean root = call.root();
        return switch (call.program()) {
            case "shutdown" -> shutdown(fleet, mac, args, root);
            case "reboot" -> root ? rebootNow(fleet, mac, "") : Result.fail(1, "reboot: Operation not permitted\n");
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
}
