package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.util.List;

/** rdma_ctl, ibv_devices and ibv_devinfo: RDMA over Thunderbolt as macOS shows it (switched on only from Recovery). */
final class RdmaPrograms implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("rdma_ctl", "ibv_devices", "ibv_devinfo");
    }

    @Override
    public Result run(Call call) {
        SimulatedFleet fleet = call.fleet();
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        SimulatedMac.Snapshot state = call.state();
        return switch (call.program()) {
            case "rdma_ctl" -> rdmaCtl(args, state);
            case "ibv_devices" -> state.rdmaEnabled() ? Result.ok(MacosOutput.ibvDevices(fleet.rdmaDevices(mac)))
                    : Result.ok(MacosOutput.ibvDevices(List.of()));
            case "ibv_devinfo" -> ibvDevinfo(fleet, mac, args, state);
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    private static Result rdmaCtl(List<String> args, SimulatedMac.Snapshot state) {
        String verb = args.isEmpty() ? "" : args.getFirst();
        return switch (verb) {
            case "status" -> Result.ok(state.rdmaEnabled() ? "enabled\n" : "disabled\n");
            case "enable", "disable" -> Result.fail(77, "rdma_ctl: This tool needs to be executed from Recovery OS.\n");
            default -> Result.fail(64, "usage: rdma_ctl status|enable|disable\n");
        };
    }

    private static Result ibvDevinfo(SimulatedFleet fleet, SimulatedMac mac, List<String> args, SimulatedMac.Snapshot state) {
        // A wedged RDMA stack: ibv_devinfo never answers (exo #1712) until the machine reboots or the fault is cleared.
        while (mac.faults().rdmaWedged() && mac.power() == PowerState.ON) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Result.fail(130, "");
            }
        }
        if (!state.rdmaEnabled()) {
            return Result.fail(255, "No IB devices found\n");
        }
        List<MacosOutput.RdmaDevice> devices = fleet.rdmaDevices(mac);
        int device = args.indexOf("-d");
        if (device >= 0 && device + 1 < args.size()) {
            String name = args.get(device + 1);
            devices = devices.stream().filter(d -> d.name().equals(name)).toList();
            if (devices.isEmpty()) {
                return Result.fail(255, "IB device '" + name + "' wasn't found\n");
            }
        }
        return Result.ok(MacosOutput.ibvDevinfo(devices));
    }
}
