package io.macfleet.cabling;

import io.macfleet.facts.HardwarePortsParser;
import io.macfleet.facts.SimpleOutputParsers;
import io.macfleet.facts.ThunderboltParser;
import io.macfleet.inventory.Topology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * A cluster of Mac Studios (M3 Ultra) described by its cables, rendered to the command outputs a real Mac
 * prints (system_profiler JSON in the shape of the real captures under cabling/real, networksetup, rdma_ctl,
 * sw_vers, ibv_devices, ifconfig) and parsed back through the production parsers.
 */
final class ClusterFixture {
    private final Map<String, Machine> machines = new LinkedHashMap<>();

    private static final class Machine {
        final String name;
        final String[] domains = new String[7];
        final List<String>[] items;
        final String[] speeds = new String[7];
        boolean rdma = true;
        boolean bridge = false;
        String version = "26.2";
        boolean captureRdma = true;

        @SuppressWarnings("unchecked")
        Machine(String name, int index) {
            this.name = name;
            this.items = new List[7];
            for (int port = 1; port <= 6; port++) {
                domains[port] = UUID.nameUUIDFromBytes((name + ":" + port).getBytes()).toString().toUpperCase();
                items[port] = new ArrayList<>();
            }
        }
    }

    static ClusterFixture macStudios(String... names) {
        ClusterFixture fixture = new ClusterFixture();
        for (String name : names) {
            fixture.machines.put(name, new Machine(name, fixture.machines.size()));
        }
        return fixture;
    }

    /** A full mesh in the proposed port plan, at Thunderbolt 5 speed. */
    static ClusterFixture fullMesh(String... names) {
        ClusterFixture fixture = macStudios(names);
        for (Topology.Link cable : PortPlan.fullMesh("test", List.of(names)).cables()) {
            fixture.cable(cable.first().machine(), cable.first().port(), cable.second().machine(), cable.second().port());
        }
        return fixture;
    }

    ClusterFixture cable(String a, int portA, String b, int portB) {
        return cable(a, portA, b, portB, "80 Gb/s");
    }

    ClusterFixture cable(String a, int portA, String b, int portB, String speed) {
        oneSided(a, portA, b, portB, speed);
        oneSided(b, portB, a, portA, speed);
        return this;
    }

    /** Only {@code a} lists {@code b} on that port, as when one end of a cable is not detected. */
    ClusterFixture oneSided(String a, int portA, String b, int portB, String speed) {
        Machine from = machines.get(a);
        Machine to = machines.get(b);
        from.speeds[portA] = speed;
        from.items[portA].add(peerItem("Mac Studio", "Mac15,14", to.domains[portB]));
        return this;
    }

    ClusterFixture unplug(String a, int portA, String b, int portB) {
        machines.get(a).items[portA].clear();
        machines.get(a).speeds[portA] = null;
        machines.get(b).items[portB].clear();
        machines.get(b).speeds[portB] = null;
        return this;
    }

    ClusterFixture drive(String machine, int port) {
        Machine target = machines.get(machine);
        target.speeds[port] = "80 Gb/s";
        target.items[port].add("""
                        {
                          "_name" : "Envoy Ultra",
                          "device_id_key" : "0xDE7B",
                          "device_name_key" : "Envoy Ultra",
                          "mode_key" : "usb_four_v2",
                          "route_string_key" : "1",
                          "vendor_id_key" : "0x1E91",
                          "vendor_name_key" : "Other World Computing"
                        }""");
        return this;
    }

    ClusterFixture outsideMac(String machine, int port) {
        Machine target = machines.get(machine);
        target.speeds[port] = "80 Gb/s";
        target.items[port].add(peerItem("MacBook Pro", "Mac17,7", "817DCFA4-B481-4100-80FC-91C7AA969F0B"));
        return this;
    }

    ClusterFixture rdma(String machine, boolean enabled) {
        machines.get(machine).rdma = enabled;
        return this;
    }

    ClusterFixture withoutRdmaStatus(String machine) {
        machines.get(machine).captureRdma = false;
        return this;
    }

    ClusterFixture bridgeActive(String machine) {
        machines.get(machine).bridge = true;
        return this;
    }

    ClusterFixture version(String machine, String version) {
        machines.get(machine).version = version;
        return this;
    }

    private static String peerItem(String name, String model, String domain) {
        return """
                        {
                          "_name" : "%s",
                          "device_id_key" : "0xA",
                          "device_name_key" : "%s",
                          "domain_uuid_key" : "%s",
                          "services_title" : [ ],
                          "vendor_id_key" : "0x0A27",
                          "vendor_name_key" : "Apple Inc."
                        }""".formatted(name, model, domain);
    }

    String thunderboltJson(String machine) {
        Machine target = machines.get(machine);
        List<String> buses = new ArrayList<>();
        for (int port = 6; port >= 1; port--) {
            boolean connected = !target.items[port].isEmpty();
            String items = connected ? "      \"_items\" : [\n" + String.join(",\n", target.items[port]) + "\n      ],\n" : "";
            buses.add("""
                        {
                    %s      "_name" : "thunderboltusb4_bus_%d",
                          "device_name_key" : "Mac Studio",
                          "domain_uuid_key" : "%s",
                          "receptacle_1_tag" : {
                            "current_speed_key" : "%s",
                            "link_status_key" : "%s",
                            "receptacle_id_key" : "%d",
                            "receptacle_status_key" : "%s"
                          },
                          "route_string_key" : "0",
                          "switch_uid_key" : "0x05AC714E4ABE981%d",
                          "vendor_name_key" : "Apple Inc."
                        }""".formatted(items, port - 1, target.domains[port],
                    connected ? target.speeds[port] : "Up to 120 Gb/s", connected ? "0x2" : "0x100", port,
                    connected ? "receptacle_connected" : "receptacle_no_devices_connected", port - 1));
        }
        return "{\n  \"SPThunderboltDataType\" : [\n" + String.join(",\n", buses) + "\n  ]\n}\n";
    }

    static String hardwarePorts() {
        StringBuilder text = new StringBuilder("\n");
        text.append("Hardware Port: Ethernet\nDevice: en0\nEthernet Address: 1c:f6:4c:00:00:01\n\n");
        text.append("Hardware Port: Wi-Fi\nDevice: en1\nEthernet Address: 1c:f6:4c:00:00:02\n\n");
        for (int port = 1; port <= 6; port++) {
            text.append("Hardware Port: Thunderbolt ").append(port).append("\nDevice: en").append(port + 1)
                    .append("\nEthernet Address: 36:a7:c5:18:04:8").append(port).append("\n\n");
        }
        text.append("Hardware Port: Thunderbolt Bridge\nDevice: bridge0\nEthernet Address: 36:a7:c5:18:04:80\n\n");
        text.append("VLAN Configurations\n===================\n");
        return text.toString();
    }

    String ibvDevices(String machine) {
        StringBuilder text = new StringBuilder("    device          \t   node GUID\n    ------          \t----------------\n");
        if (machines.get(machine).rdma) {
            for (int port = 1; port <= 6; port++) {
                text.append(String.format("    %-16s\t%016x%n", "rdma_en" + (port + 1), 0xe0c5797d9c8fac05L + port));
            }
        }
        return text.toString();
    }

    String ifconfig(String machine) {
        String flags = machines.get(machine).bridge ? "8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST>" : "8822<BROADCAST,SMART,SIMPLEX,MULTICAST>";
        return "lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n\tinet 127.0.0.1 netmask 0xff000000\n"
                + "bridge0: flags=" + flags + " mtu 1500\n\toptions=63<RXCSUM,TXCSUM,TSO4,TSO6>\n\tether 36:a7:c5:18:04:80\n"
                + "\tmember: en2 flags=3<LEARNING,DISCOVER>\n\tstatus: " + (machines.get(machine).bridge ? "active" : "inactive") + "\n"
                + "en2: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n\tstatus: active\n";
    }

    String softwareVersion(String machine) {
        return "ProductName:\t\tmacOS\nProductVersion:\t\t" + machines.get(machine).version + "\nBuildVersion:\t\t25C56\n";
    }

    List<MachineCablingFacts> facts() {
        List<MachineCablingFacts> facts = new ArrayList<>();
        int address = 11;
        for (Machine machine : machines.values()) {
            facts.add(new MachineCablingFacts(machine.name, Optional.of("192.168.50." + address++),
                    ThunderboltParser.parse(thunderboltJson(machine.name)),
                    HardwarePortsParser.parse(hardwarePorts()),
                    machine.captureRdma ? Optional.of(SimpleOutputParsers.rdmaEnabled(machine.rdma ? "enabled\n" : "disabled\n")) : Optional.empty(),
                    Optional.of(SimpleOutputParsers.rdmaDevices(ibvDevices(machine.name))),
                    Optional.of(SimpleOutputParsers.softwareVersion(softwareVersion(machine.name)).productVersion()),
                    Optional.of(SimpleOutputParsers.bridgeActive(ifconfig(machine.name)))));
        }
        return facts;
    }

    void writeCaptures(Path directory) throws IOException {
        int address = 11;
        for (Machine machine : machines.values()) {
            Path dir = Files.createDirectories(directory.resolve(machine.name));
            Files.writeString(dir.resolve(CaptureDirectory.THUNDERBOLT), thunderboltJson(machine.name));
            Files.writeString(dir.resolve(CaptureDirectory.HARDWARE_PORTS), hardwarePorts());
            if (machine.captureRdma) {
                Files.writeString(dir.resolve(CaptureDirectory.RDMA_STATUS), machine.rdma ? "enabled\n" : "disabled\n");
            }
            Files.writeString(dir.resolve(CaptureDirectory.SOFTWARE_VERSION), softwareVersion(machine.name));
            Files.writeString(dir.resolve(CaptureDirectory.RDMA_DEVICES), ibvDevices(machine.name));
            Files.writeString(dir.resolve(CaptureDirectory.IFCONFIG), ifconfig(machine.name));
            Files.writeString(dir.resolve(CaptureDirectory.ADDRESS), "192.168.50." + address++ + "\n");
        }
    }

    List<String> names() {
        return List.copyOf(machines.keySet());
    }
}
