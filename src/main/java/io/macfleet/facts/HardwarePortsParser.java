package io.macfleet.facts;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads {@code networksetup -listallhardwareports}: blocks of "Hardware Port:", "Device:" and
 * "Ethernet Address:" lines separated by blank lines, followed by a "VLAN Configurations" section.
 */
public final class HardwarePortsParser {
    public static final String COMMAND = "networksetup -listallhardwareports";

    private HardwarePortsParser() {
    }

    public static HardwarePorts parse(String output) {
        Map<String, String> devices = new LinkedHashMap<>();
        String port = null;
        int portLine = 0;
        String[] lines = output.split("\\R", -1);
        for (int index = 0; index < lines.length; index++) {
            String line = lines[index].strip();
            if (line.startsWith("Hardware Port:")) {
                if (port != null) {
                    throw new FactsParseException(COMMAND, "line " + portLine + ": hardware port '" + port + "' has no Device: line");
                }
                port = line.substring("Hardware Port:".length()).strip();
                portLine = index + 1;
            } else if (line.startsWith("Device:")) {
                if (port == null) {
                    throw new FactsParseException(COMMAND, "line " + (index + 1) + ": Device: line without a Hardware Port: line before it");
                }
                devices.put(port, line.substring("Device:".length()).strip());
                port = null;
            }
        }
        if (port != null) {
            throw new FactsParseException(COMMAND, "line " + portLine + ": hardware port '" + port + "' has no Device: line");
        }
        if (devices.isEmpty()) {
            throw new FactsParseException(COMMAND, "no 'Hardware Port:' entries found (is this the output of " + COMMAND + "?)");
        }
        return new HardwarePorts(devices);
    }
}
