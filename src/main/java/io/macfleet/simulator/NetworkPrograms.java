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
            case "networksetup" -> networksetup(fleet, mac, args, root);
            case "ifconfig" -> ifconfig(fleet, mac, args, root, state);
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    private static Result networksetup(SimulatedFleet fleet, SimulatedMac mac, List<String> args, boolean root) {
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
        if (args.size() == 2 && args.getFirst().equals("-getinfo")) {
            Optional<String> device = serviceDevice(mac, args.get(1));
            if (device.isEmpty()) {
                return Result.fail(4, args.get(1) + " is not a recognized network service.\n** Error: The parameters were not valid.\n");
            }
            return Result.ok(getInfo(fleet, mac, device.get()));
        }
        if ((args.size() == 4 || args.size() == 5) && args.getFirst().equals("-setmanual")) {
            if (!root) {
                return Result.fail(14, "** Error: Command requires admin privileges.\n");
            }
            Optional<String> device = serviceDevice(mac, args.get(1));
            if (device.isEmpty()) {
                return Result.fail(4, args.get(1) + " is not a recognized network service.\n** Error: The parameters were not valid.\n");
            }
            if (!args.get(2).matches("\\d+\\.\\d+\\.\\d+\\.\\d+") || !args.get(3).matches("\\d+\\.\\d+\\.\\d+\\.\\d+")) {
                return Result.fail(4, "** Error: The parameters were not valid.\n");
            }
            // A manual address of a Thunderbolt service is what ifconfig shows on its interface from now on.
            mac.setIpv4(device.get(), args.get(2) + "/" + prefixOf(args.get(3)));
            return Result.ok("");
        }
        return Result.fail(4, "networksetup: the simulator answers -listallhardwareports, -getinfo SERVICE, -setmanual SERVICE IP MASK [ROUTER]"
                + " and -getnetworkserviceenabled|-setnetworkserviceenabled \"Thunderbolt Bridge\" [on|off]\n");
    }

    /** The device of a network service named like its hardware port ("Thunderbolt 2" is en3), unless it was deleted. */
    private static Optional<String> serviceDevice(SimulatedMac mac, String service) {
        if (mac.faults().networkServiceDeleted(service)) {
            return Optional.empty();
        }
        return MacosOutput.macStudioHardwarePorts(mac.spec()).stream().filter(port -> port.name().equals(service))
                .map(MacosOutput.HardwarePort::device).findFirst();
    }

    /**
     * networksetup -getinfo as macOS prints it (see macos-samples/networksetup-getinfo): "Manual Configuration" for an
     * address set with -setmanual (the simulator keeps only those for Thunderbolt interfaces), else "DHCP Configuration"
     * with the self-assigned address, or "none" on an interface without link.
     */
    private static String getInfo(SimulatedFleet fleet, SimulatedMac mac, String device) {
        String configured = mac.snapshot().ipv4().get(device);
        Optional<MacosOutput.Interface> face = fleet.interfaces(mac).stream().filter(i -> i.name().equals(device)).findFirst();
        String shown = configured != null ? configured : face.map(MacosOutput.Interface::ipv4WithPrefix).orElse(null);
        StringBuilder out = new StringBuilder(configured != null && !device.equals("en0") ? "Manual Configuration\n" : "DHCP Configuration\n");
        if (shown == null) {
            out.append("IP address: none\nRouter: none\n");
        } else {
            String[] parts = shown.split("/");
            out.append("IP address: ").append(parts[0]).append('\n')
                    .append("Subnet mask: ").append(netmaskOf(Integer.parseInt(parts[1]))).append('\n')
                    .append(configured != null ? "Router: (null)\n" : "Router: none\n");
        }
        out.append("IPv6: Automatic\nIPv6 IP address: none\nIPv6 Router: none\n");
        out.append("Ethernet Address: ").append(mac.spec().macAddress(device)).append('\n');
        return out.toString();
    }

    private static String netmaskOf(int prefix) {
        long mask = prefix == 0 ? 0 : (0xFFFFFFFFL << (32 - prefix)) & 0xFFFFFFFFL;
        return (mask >>> 24) + "." + ((mask >>> 16) & 255) + "." + ((mask >>> 8) & 255) + "." + (mask & 255);
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
