package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.util.List;
import java.util.Optional;

/** networksetup and ifconfig: the Thunderbolt Bridge service and the addresses of the Thunderbolt interfaces. */
final class NetworkPrograms implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("networksetup", "ifconfig");
    }

    @Override
    public Result run(Call call) {
        SimulatedFleet fleet = call.fleet();
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        boolean root = call.root();
        SimulatedMac.Snapshot state = call.state();
        return switch (call.program()) {
            case "networksetup" -> networksetup(mac, args, root);
            case "ifconfig" -> ifconfig(fleet, mac, args, root, state);
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    private static Result networksetup(SimulatedMac mac, List<String> args, boolean root) {
        if (args.contains("-listallhardwareports")) {
            return Result.ok(MacosOutput.listAllHardwarePorts(MacosOutput.macStudioHardwarePorts(mac.spec())));
        }
        if (args.size() == 2 && args.getFirst().equals("-getnetworkserviceenabled")) {
            if (!args.get(1).equals("Thunderbolt Bridge")) {
                return Result.fail(4, args.get(1) + " is not a recognized network service.\n** Error: The parameters were not valid.\n");
            }
            return Result.ok(mac.snapshot().thunderboltBridgeActive() ? "Enabled\n" : "Disabled\n");
        }
        if (args.size() == 3 && args.getFirst().equals("-setnetworkserviceenabled")) {
            if (!root) {
                return Result.fail(14, "** Error: Command requires admin privileges.\n");
            }
            if (!args.get(1).equals("Thunderbolt Bridge")) {
                return Result.fail(4, args.get(1) + " is not a recognized network service.\n** Error: The parameters were not valid.\n");
            }
            mac.setThunderboltBridgeActive(args.get(2).equalsIgnoreCase("on"));
            return Result.ok("");
        }
        return Result.fail(4, "networksetup: the simulator answers -listallhardwareports and -getnetworkserviceenabled|-setnetworkserviceenabled \"Thunderbolt Bridge\" [on|off]\n");
    }

    private static Result ifconfig(SimulatedFleet fleet, SimulatedMac mac, List<String> args, boolean root, SimulatedMac.Snapshot state) {
        List<MacosOutput.Interface> interfaces = fleet.interfaces(mac);
        if (args.isEmpty()) {
            return Result.ok(MacosOutput.ifconfig(interfaces));
        }
        String name = args.getFirst();
        Optional<MacosOutput.Interface> face = interfaces.stream().filter(i -> i.name().equals(name)).findFirst();
        if (face.isEmpty()) {
            return Result.fail(1, "ifconfig: interface " + name + " does not exist\n");
        }
        if (args.size() == 1) {
            String all = MacosOutput.ifconfig(List.of(face.get()));
            return Result.ok(all.substring(all.indexOf(name + ":")));
        }
        if (args.size() >= 5 && args.get(1).equals("inet") && args.get(3).equals("netmask")) {
            if (!root) {
                return Result.fail(1, "ifconfig: ioctl (SIOCAIFADDR): Operation not permitted\n");
            }
            mac.setIpv4(name, args.get(2) + "/" + prefixOf(args.get(4)));
            return Result.ok("");
        }
        return Result.fail(1, "ifconfig: the simulator answers ifconfig [IFACE] and ifconfig IFACE inet ADDRESS netmask MASK\n");
    }

    private static int prefixOf(String netmask) {
        if (netmask.startsWith("0x")) {
            return Long.bitCount(Long.parseLong(netmask.substring(2), 16));
        }
        int bits = 0;
        for (String octet : netmask.split("\\.")) {
            bits += Integer.bitCount(Integer.parseInt(octet));
        }
        return bits;
    }
}
