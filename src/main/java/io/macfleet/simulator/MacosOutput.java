package io.macfleet.simulator;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Renders macOS command output in the real formats. Each method documents which stored sample under
 * src/test/resources/macos-samples/ it reproduces.
 */
public final class MacosOutput {
    private MacosOutput() {
    }

    /** What one Thunderbolt port sees. {@code speed} is null when nothing is attached; {@code peer} null when no Mac is seen. */
    public record ThunderboltPort(int port, String domainUuid, String switchUid, LinkSpeed speed, Peer peer) {
    }

    /** A Mac seen at the far end of a cable, as listed in the bus's _items. */
    public record Peer(String modelName, String modelIdentifier, String domainUuid, String ipServiceUuid,
                       boolean rdmaService, String rdmaServiceUuid) {
    }

    /** One RDMA device as ibv_devices/ibv_devinfo list it. */
    public record RdmaDevice(String name, long nodeGuid, long systemImageGuid, boolean active, int lid) {
    }

    /** sw_vers: sample sw_vers/macos-26.2.txt. */
    public static String swVers(MacosRelease release) {
        return "ProductName:\t\tmacOS\nProductVersion:\t\t" + release.version() + "\nBuildVersion:\t\t" + release.build() + "\n";
    }

    /** uname -a: sample uname/a-macos-26.2-t8103.txt, with the M3 Ultra's SoC (T6031). */
    public static String unameAll(String hostName, MacosRelease release) {
        return "Darwin " + hostName + " " + release.darwinVersion() + " Darwin Kernel Version " + release.darwinVersion() + ": "
                + release.kernelBuildDate() + "; root:" + release.xnu() + "/RELEASE_ARM64_T6031 arm64\n";
    }

    /** system_profiler -json SPHardwareDataType: sample system_profiler-SPHardwareDataType/mac-studio-m2-ultra-masked.json. */
    public static String hardwareJson(MacSpec spec, MacosRelease release) {
        Map<String, Object> overview = new LinkedHashMap<>();
        overview.put("_name", "hardware_overview");
        overview.put("activation_lock_status", "activation_lock_disabled");
        overview.put("boot_rom_version", firmwareVersion(release));
        overview.put("chip_type", spec.chip());
        overview.put("machine_model", spec.modelIdentifier());
        overview.put("machine_name", spec.modelName());
        overview.put("model_number", spec.memoryGb() == 512 ? "Z1CD0004WLL/A" : "MU973LL/A");
        overview.put("number_processors", "proc " + spec.cpuCores() + ":" + spec.performanceCores() + ":" + spec.efficiencyCores() + ":0");
        overview.put("os_loader_version", firmwareVersion(release));
        overview.put("physical_memory", spec.memoryGb() + " GB");
        overview.put("platform_UUID", spec.hardwareUuid());
        overview.put("provisioning_UDID", "00006032-" + spec.hardwareUuid().replace("-", "").substring(0, 16));
        overview.put("serial_number", spec.serialNumber());
        return AppleJson.write(Map.of("SPHardwareDataType", List.of(overview)));
    }

    /**
     * {@code system_profiler -json SPDisplaysDataType} of a Mac without a display (a headless Mac Studio): the GPU
     * entry only, in the layout of the stored real capture.
     */
    public static String displaysJson(MacSpec spec) {
        Map<String, Object> gpu = new LinkedHashMap<>();
        gpu.put("_name", spec.chip());
        gpu.put("spdisplays_metal", "spdisplays_supported");
        gpu.put("spdisplays_vendor", "sppci_vendor_Apple");
        gpu.put("sppci_bus", "spdisplays_builtin");
        gpu.put("sppci_cores", Integer.toString(spec.gpuCores()));
        gpu.put("sppci_device_type", "spdisplays_gpu");
        gpu.put("sppci_model", spec.chip());
        return AppleJson.write(Map.of("SPDisplaysDataType", List.of(gpu)));
    }

    /** Invented: firmware versions are not in any stored sample for macOS 26 (see SOURCES.md). */
    private static String firmwareVersion(MacosRelease release) {
        return switch (release.version()) {
            case "26.1" -> "13822.41.1";
            case "26.2" -> "13822.61.10";
            default -> "13822.81.10";
        };
    }

    /** system_profiler -json SPThunderboltDataType: sample system_profiler-SPThunderboltDataType/mac-studio-m3-ultra-omlx.json. */
    public static String thunderboltJson(MacSpec spec, List<ThunderboltPort> ports) {
        List<Object> buses = new ArrayList<>();
        for (ThunderboltPort port : descending(ports)) {
            Map<String, Object> bus = new LinkedHashMap<>();
            bus.put("_name", "thunderboltusb4_bus_" + (port.port() - 1));
            bus.put("device_name_key", spec.modelName());
            bus.put("domain_uuid_key", port.domainUuid());
            Map<String, Object> receptacle = new LinkedHashMap<>();
            boolean connected = port.speed() != null;
            receptacle.put("current_speed_key", connected ? port.speed().systemProfilerText() : "Up to 120 Gb/s");
            receptacle.put("link_status_key", connected ? "0x2" : "0x100");
            if (connected) {
                receptacle.put("micro_version_key", "0.0.0");
            }
            receptacle.put("receptacle_id_key", String.valueOf(port.port()));
            receptacle.put("receptacle_status_key", connected ? "receptacle_connected" : "receptacle_no_devices_connected");
            bus.put("receptacle_1_tag", receptacle);
            bus.put("route_string_key", "0");
            bus.put("switch_uid_key", port.switchUid());
            bus.put("vendor_name_key", "Apple Inc.");
            if (port.peer() != null) {
                Peer peer = port.peer();
                Map<String, Object> item = new LinkedHashMap<>();
                item.put("_name", peer.modelName());
                item.put("device_id_key", "0xA");
                item.put("device_name_key", peer.modelIdentifier());
                item.put("domain_uuid_key", peer.domainUuid());
                List<Object> services = new ArrayList<>();
                services.add(Map.of("_name", "service_ip", "protocol_id_key", 1, "protocol_revision_key", 1,
                        "protocol_version_key", 1, "service_uuid_key", peer.ipServiceUuid()));
                if (peer.rdmaService()) {
                    services.add(Map.of("_name", "unknown_xd_service", "protocol_id_key", 64087, "protocol_revision_key", 0,
                            "protocol_version_key", 1, "service_key_key", "\u02c7\u02c7\u02c7\u02c7\u02c7\u02c7AD",
                            "service_uuid_key", peer.rdmaServiceUuid()));
                }
                item.put("services_title", services);
                item.put("vendor_id_key", "0x0A27");
                item.put("vendor_name_key", "Apple Inc.");
                bus.put("_items", List.of(item));
            }
            buses.add(bus);
        }
        return AppleJson.write(Map.of("SPThunderboltDataType", buses));
    }

    /** system_profiler SPThunderboltDataType (text): layout of sample system_profiler-SPThunderboltDataType-text/. */
    public static String thunderboltText(MacSpec spec, List<ThunderboltPort> ports) {
        StringBuilder out = new StringBuilder("Thunderbolt/USB4:\n\n");
        for (ThunderboltPort port : descending(ports)) {
            boolean connected = port.speed() != null;
            out.append("    Thunderbolt/USB4 Bus ").append(port.port() - 1).append(":\n\n");
            out.append("      Vendor Name: Apple Inc.\n");
            out.append("      Device Name: ").append(spec.modelName()).append('\n');
            out.append("      UID: ").append(port.switchUid()).append('\n');
            out.append("      Route String: 0\n");
            out.append("      Domain UUID: ").append(port.domainUuid()).append('\n');
            out.append("      Port:\n");
            out.append("          Status: ").append(connected ? "Device connected" : "No device connected").append('\n');
            out.append("          Link Status: ").append(connected ? "0x2" : "0x100").append('\n');
            out.append("          Speed: ").append(connected ? port.speed().systemProfilerText() : "Up to 120 Gb/s").append('\n');
            out.append("          Receptacle: ").append(port.port()).append('\n');
            if (connected) {
                out.append("          Micro Firmware Version: 0.0.0\n");
            }
            out.append('\n');
            Peer peer = port.peer();
            if (peer != null) {
                out.append("        ").append(peer.modelName()).append(":\n\n");
                out.append("          Vendor Name: Apple Inc.\n");
                out.append("          Device Name: ").append(peer.modelIdentifier()).append('\n');
                out.append("          Device ID: 0xA\n");
                out.append("          Vendor ID: 0x0A27\n");
                out.append("          Domain UUID: ").append(peer.domainUuid()).append('\n');
                out.append("          Services:\n");
                out.append("            Internet Protocol:\n");
                out.append("              Protocol ID: 1\n              Protocol Version: 1\n              Protocol Revision: 1\n");
                out.append("              Service UUID: ").append(peer.ipServiceUuid()).append('\n');
                if (peer.rdmaService()) {
                    out.append("            Service: Unknown:\n");
                    out.append("              Protocol ID: 64087\n              Protocol Version: 1\n              Protocol Revision: 0\n");
                    out.append("              Service Key: rdma\n");
                    out.append("              Service UUID: ").append(peer.rdmaServiceUuid()).append('\n');
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    private static List<ThunderboltPort> descending(List<ThunderboltPort> ports) {
        List<ThunderboltPort> sorted = new ArrayList<>(ports);
        sorted.sort((x, y) -> Integer.compare(y.port(), x.port()));
        return sorted;
    }

    /** A hardware port line of networksetup -listallhardwareports. */
    public record HardwarePort(String name, String device, String ethernetAddress) {
    }

    /** networksetup -listallhardwareports: samples networksetup-listallhardwareports/. */
    public static String listAllHardwarePorts(List<HardwarePort> ports) {
        StringBuilder out = new StringBuilder("\n");
        for (HardwarePort port : ports) {
            out.append("Hardware Port: ").append(port.name()).append('\n');
            out.append("Device: ").append(port.device()).append('\n');
            out.append("Ethernet Address: ").append(port.ethernetAddress()).append("\n\n");
        }
        return out.append("VLAN Configurations\n===================\n").toString();
    }

    /** The hardware ports of an M3 Ultra Mac Studio: Ethernet en0, Wi-Fi en1, Thunderbolt 1..6 on en2..en7, the bridge. */
    public static List<HardwarePort> macStudioHardwarePorts(MacSpec spec) {
        List<HardwarePort> ports = new ArrayList<>();
        ports.add(new HardwarePort("Ethernet", "en0", spec.macAddress("en0")));
        ports.add(new HardwarePort("Thunderbolt Bridge", "bridge0", spec.macAddress("bridge0")));
        ports.add(new HardwarePort("Wi-Fi", "en1", spec.macAddress("en1")));
        for (int port = 1; port <= MacSpec.THUNDERBOLT_PORTS; port++) {
            String device = MacSpec.thunderboltInterface(port);
            ports.add(new HardwarePort("Thunderbolt " + port, device, spec.macAddress(device)));
        }
        return ports;
    }

    /** ibv_devices: samples ibv_devices/ (the rdma-core layout). */
    public static String ibvDevices(List<RdmaDevice> devices) {
        StringBuilder out = new StringBuilder("    device          \t   node GUID\n    ------          \t----------------\n");
        for (RdmaDevice device : devices) {
            out.append(String.format(Locale.ROOT, "    %-16s\t%016x\n", device.name(), device.nodeGuid()));
        }
        return out.toString();
    }

    /** ibv_devinfo: sample ibv_devinfo/macbook-pro-three-ports-down.txt. */
    public static String ibvDevinfo(List<RdmaDevice> devices) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < devices.size(); i++) {
            RdmaDevice device = devices.get(i);
            if (i > 0) {
                out.append('\n');
            }
            out.append("hca_id:\t").append(device.name()).append('\n');
            out.append("\ttransport:\t\t\tThunderbolt (100)\n");
            out.append("\tnode_guid:\t\t\t").append(guid(device.nodeGuid())).append('\n');
            out.append("\tsys_image_guid:\t\t\t").append(guid(device.systemImageGuid())).append('\n');
            out.append("\tvendor_id:\t\t\t0x0000\n\tvendor_part_id:\t\t\t0\n\thw_ver:\t\t\t\t0x0\n\tphys_port_cnt:\t\t\t1\n");
            out.append("\t\tport:\t1\n");
            out.append("\t\t\tstate:\t\t\t").append(device.active() ? "PORT_ACTIVE (4)" : "PORT_DOWN (1)").append('\n');
            out.append("\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n");
            out.append("\t\t\tsm_lid:\t\t\t").append(device.lid()).append('\n');
            out.append("\t\t\tport_lid:\t\t").append(device.lid()).append('\n');
            out.append("\t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tThunderbolt\n");
        }
        return out.toString();
    }

    private static String guid(long value) {
        String hex = String.format(Locale.ROOT, "%016x", value);
        return hex.substring(0, 4) + ":" + hex.substring(4, 8) + ":" + hex.substring(8, 12) + ":" + hex.substring(12);
    }

    /** A GUID stable for one machine and one interface. */
    public static long guidFor(MacSpec spec, String what) {
        return UUID.nameUUIDFromBytes((spec.hardwareUuid() + "/guid/" + what).getBytes(StandardCharsets.UTF_8)).getMostSignificantBits();
    }

    /** profiles status -type bootstraptoken: sample profiles/status-bootstraptoken-escrowed.txt. */
    /**
     * A Mac Studio's power settings out of the box, in the order {@code pmset -g} lists them. Keys and layout follow
     * the real samples under macos-samples/pmset (an M3 MacBook Pro and a Mac mini); a desktop has autorestart and no
     * lowpowermode or hibernation settings.
     */
    public static final Map<String, String> MAC_STUDIO_POWER_DEFAULTS = orderedMap(
            "standby", "0", "Sleep On Power Button", "1", "autorestart", "0", "powernap", "1", "networkoversleep", "0",
            "disksleep", "10", "sleep", "1", "ttyskeepawake", "1", "displaysleep", "10", "tcpkeepalive", "1",
            "powermode", "0", "womp", "1");

    private static Map<String, String> orderedMap(String... keysAndValues) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return java.util.Collections.unmodifiableMap(map);
    }

    /**
     * {@code pmset -g}: pmset.c prints each setting as {@code " %-20s %s"}, hence "Sleep On Power Button 1" with a
     * single space; a sleep timer that something holds off carries "(sleep prevented by ...)" as in the samples.
     */
    public static String pmsetLive(Map<String, String> settings) {
        StringBuilder out = new StringBuilder("System-wide power settings:\nCurrently in use:\n");
        settings.forEach((name, value) -> {
            out.append(String.format(Locale.ROOT, " %-20s %s", name, value));
            if (name.equals("sleep") && !value.equals("0")) {
                out.append(" (sleep prevented by sharingd, powerd)");
            }
            out.append('\n');
        });
        return out.toString();
    }

    /** {@code pmset -g custom}: a desktop has one power source, "AC Power" (sample pmset/g-custom-*.txt). */
    public static String pmsetCustom(Map<String, String> settings) {
        StringBuilder out = new StringBuilder("AC Power:\n");
        settings.forEach((name, value) -> out.append(String.format(Locale.ROOT, " %-20s %s", name, value)).append('\n'));
        return out.toString();
    }

    /** /etc/ssh/sshd_config.d/100-macos.conf as macOS ships it (contents described in SOURCES.md). */
    public static final String SSHD_CONFIG_D_MACOS = """
            # options set by macOS that differ from the OpenSSH defaults
            UsePAM yes
            AcceptEnv LANG LC_*
            """;

    /**
     * {@code sshd -T}: the effective server settings. The defaults are macOS 26's OpenSSH (resource
     * simulator/sshd-T-macos-26.txt, composed from a real OpenSSH 10 dump, see SOURCES.md); each drop-in in
     * /etc/ssh/sshd_config.d is read in name order and, as sshd_config(5) says, the first value obtained for a keyword
     * wins, so an earlier file beats a later one and both beat the defaults.
     */
    public static String sshdEffective(List<String> dropInsInNameOrder) {
        Map<String, String> firstValues = new LinkedHashMap<>();
        for (String dropIn : dropInsInNameOrder) {
            for (String line : dropIn.split("\n")) {
                String trimmed = line.strip();
                if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                    continue;
                }
                String[] parts = trimmed.split("[\\s=]+", 2);
                String keyword = parts[0].toLowerCase(Locale.ROOT);
                if (parts.length == 2 && !keyword.equals("include") && !keyword.equals("acceptenv") && !keyword.equals("match")) {
                    firstValues.putIfAbsent(keyword, parts[1].strip());
                }
            }
        }
        StringBuilder out = new StringBuilder();
        for (String line : SSHD_DEFAULTS.split("\n")) {
            String keyword = line.substring(0, line.indexOf(' '));
            String value = firstValues.remove(keyword);
            out.append(value == null ? line : keyword + " " + value).append('\n');
        }
        firstValues.forEach((keyword, value) -> out.append(keyword).append(' ').append(value).append('\n'));
        return out.toString();
    }

    private static final String SSHD_DEFAULTS = resource("/simulator/sshd-T-macos-26.txt").strip();

    private static String resource(String name) {
        try (var in = MacosOutput.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    public static String bootstrapTokenStatus(boolean mdmEnrolled, boolean escrowed) {
        return "profiles: Bootstrap Token supported on server: " + (mdmEnrolled ? "YES" : "NO") + "\n"
                + "profiles: Bootstrap Token escrowed to server: " + (escrowed ? "YES" : "NO") + "\n";
    }

    /** One interface as ifconfig prints it (samples ifconfig/). */
    public record Interface(String name, String macAddress, String ipv4WithPrefix, boolean active, boolean thunderbolt,
                            List<String> bridgeMembers) {
    }

    /** ifconfig: layout of the stored ifconfig samples (lo0, en0, Thunderbolt en interfaces, bridge0). */
    public static String ifconfig(List<Interface> interfaces) {
        StringBuilder out = new StringBuilder();
        out.append("lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n\toptions=1203<RXCSUM,TXCSUM,TXSTATUS,SW_TIMESTAMP>\n")
                .append("\tinet 127.0.0.1 netmask 0xff000000\n\tinet6 ::1 prefixlen 128\n\tinet6 fe80::1%lo0 prefixlen 64 scopeid 0x1\n")
                .append("\tnd6 options=201<PERFORMNUD,DAD>\n");
        for (Interface face : interfaces) {
            if (face.bridgeMembers() != null) {
                out.append(face.name()).append(": flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n");
                out.append("\toptions=63<RXCSUM,TXCSUM,TSO4,TSO6>\n\tether ").append(face.macAddress()).append('\n');
                out.append("\tConfiguration:\n\t\tid 0:0:0:0:0:0 priority 0 hellotime 0 fwddelay 0\n")
                        .append("\t\tmaxage 0 holdcnt 0 proto stp maxaddr 100 timeout 1200\n")
                        .append("\t\troot id 0:0:0:0:0:0 priority 0 ifcost 0 port 0\n\t\tipfilter disabled flags 0x0\n");
                int bridgePort = 10;
                for (String member : face.bridgeMembers()) {
                    out.append("\tmember: ").append(member).append(" flags=3<LEARNING,DISCOVER>\n")
                            .append("\t        ifmaxaddr 0 port ").append(bridgePort++).append(" priority 0 path cost 0\n");
                }
                appendInet(face, out);
                out.append("\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: <unknown type>\n\tstatus: ")
                        .append(face.active() ? "active" : "inactive").append('\n');
            } else if (face.thunderbolt()) {
                out.append(face.name()).append(": flags=8963<UP,BROADCAST,SMART,RUNNING,PROMISC,SIMPLEX,MULTICAST> mtu 1500\n");
                out.append("\toptions=460<TSO4,TSO6,CHANNEL_IO>\n\tether ").append(face.macAddress()).append('\n');
                appendInet(face, out);
                out.append("\tmedia: autoselect <full-duplex>\n\tstatus: ").append(face.active() ? "active" : "inactive").append('\n');
            } else {
                out.append(face.name()).append(": flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n");
                out.append("\toptions=6460<TSO4,TSO6,CHANNEL_IO,PARTIAL_CSUM,ZEROINVERT_CSUM>\n\tether ").append(face.macAddress()).append('\n');
                appendInet(face, out);
                out.append("\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: autoselect\n\tstatus: ").append(face.active() ? "active" : "inactive").append('\n');
            }
        }
        return out.toString();
    }

    private static void appendInet(Interface face, StringBuilder out) {
        if (face.ipv4WithPrefix() == null) {
            return;
        }
        String[] parts = face.ipv4WithPrefix().split("/");
        int prefix = Integer.parseInt(parts[1]);
        long mask = prefix == 0 ? 0 : (0xFFFFFFFFL << (32 - prefix)) & 0xFFFFFFFFL;
        String[] octets = parts[0].split("\\.");
        long address = 0;
        for (String octet : octets) {
            address = (address << 8) | Integer.parseInt(octet);
        }
        long broadcast = (address | ~mask) & 0xFFFFFFFFL;
        out.append("\tinet ").append(parts[0]).append(" netmask 0x").append(String.format("%08x", mask)).append(" broadcast ")
                .append((broadcast >>> 24) & 0xff).append('.').append((broadcast >>> 16) & 0xff).append('.')
                .append((broadcast >>> 8) & 0xff).append('.').append(broadcast & 0xff).append('\n');
    }

    /** uptime: layout of a real macOS 26.2 sample ("23:46  up  9:53, 2 users, load averages: 4.69 3.51 3.31"). */
    public static String uptime(Duration up) {
        String now = LocalTime.now(ZoneId.systemDefault()).format(DateTimeFormatter.ofPattern("H:mm"));
        long minutes = up.toMinutes();
        String since;
        if (minutes < 60) {
            since = minutes + " min" + (minutes == 1 ? "" : "s");
        } else if (minutes < 24 * 60) {
            since = String.format(Locale.ROOT, "%2d:%02d", minutes / 60, minutes % 60);
        } else {
            long days = minutes / (24 * 60);
            since = days + " day" + (days == 1 ? "" : "s") + String.format(Locale.ROOT, ", %2d:%02d", (minutes / 60) % 24, minutes % 60);
        }
        return now + "  up " + since + ", 1 user, load averages: 0.42 0.35 0.31\n";
    }

    /**
     * {@code sysctl -n kern.boottime}: the C struct timeval as sysctl prints it, then ctime(3) of it in the Mac's time
     * zone (UTC here), e.g. {@code { sec = 1763822431, usec = 520390 } Sat Nov 22 14:40:31 2025}; see
     * src/test/resources/macos-samples/SOURCES.md.
     */
    static String bootTime(java.time.Instant bootTime) {
        java.time.ZonedDateTime at = bootTime.atZone(java.time.ZoneOffset.UTC);
        String ctime = java.time.format.DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", java.util.Locale.ROOT).format(at);
        return "{ sec = " + bootTime.getEpochSecond() + ", usec = " + bootTime.getNano() / 1000 + " } " + ctime;
    }
}
