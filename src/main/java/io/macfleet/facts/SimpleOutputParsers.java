package io.macfleet.facts;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Parsers for the short, line-oriented outputs: {@code sw_vers}, {@code rdma_ctl status},
 * {@code ibv_devices} and the {@code bridge0} block of {@code ifconfig}.
 */
public final class SimpleOutputParsers {
    private static final Pattern MACOS_VERSION = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){0,2}");
    private static final Pattern RDMA_DEVICE = Pattern.compile("rdma_[A-Za-z0-9]+");

    private SimpleOutputParsers() {
    }

    /** {@code sw_vers}: "ProductName:", "ProductVersion:", "BuildVersion:" lines, tab-separated. */
    public static SoftwareVersion softwareVersion(String output) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : output.split("\\R")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                fields.put(line.substring(0, colon).strip(), line.substring(colon + 1).strip());
            }
        }
        String version = fields.get("ProductVersion");
        if (version == null) {
            throw new FactsParseException("sw_vers", "no ProductVersion: line");
        }
        if (!MACOS_VERSION.matcher(version).matches()) {
            throw new FactsParseException("sw_vers", "ProductVersion '" + version + "' is not a version number");
        }
        String build = fields.get("BuildVersion");
        if (build == null || build.isEmpty()) {
            throw new FactsParseException("sw_vers", "no BuildVersion: line");
        }
        return new SoftwareVersion(fields.getOrDefault("ProductName", "macOS"), version, build);
    }

    /** {@code rdma_ctl status}: "enabled" or "disabled". */
    public static boolean rdmaEnabled(String output) {
        String status = output.strip();
        return switch (status) {
            case "enabled" -> true;
            case "disabled" -> false;
            default -> throw new FactsParseException("rdma_ctl status", "expected 'enabled' or 'disabled', got '" + abbreviate(status) + "'");
        };
    }

    /** {@code ibv_devices}: a "device / node GUID" table; returns the device names. */
    public static List<String> rdmaDevices(String output) {
        List<String> devices = new ArrayList<>();
        String[] lines = output.split("\\R");
        boolean header = false;
        for (int index = 0; index < lines.length; index++) {
            String line = lines[index].strip();
            if (line.isEmpty() || line.startsWith("---")) {
                continue;
            }
            if (line.startsWith("device")) {
                header = true;
                continue;
            }
            String device = line.split("\\s+")[0];
            if (!RDMA_DEVICE.matcher(device).matches()) {
                throw new FactsParseException("ibv_devices", "line " + (index + 1) + ": expected an RDMA device such as rdma_en3, got '" + abbreviate(line) + "'");
            }
            devices.add(device);
        }
        if (!header && !devices.isEmpty()) {
            throw new FactsParseException("ibv_devices", "missing the 'device  node GUID' header");
        }
        return devices;
    }

    /**
     * {@code ibv_devinfo}: the state of each RDMA device's port, e.g. rdma_en3 to PORT_ACTIVE. A device is active when
     * any of its ports is (Thunderbolt devices have one). Reads both macOS's layout and rdma-core's with a
     * "Device ports:" line. Empty output (no devices: ibv_devinfo then prints "No IB devices found" on standard
     * error and exits 255) gives no states.
     */
    public static Map<String, String> rdmaPortStates(String output) {
        Map<String, String> states = new LinkedHashMap<>();
        String device = null;
        String[] lines = output.split("\\R");
        for (int index = 0; index < lines.length; index++) {
            String line = lines[index].strip();
            if (line.startsWith("hca_id:")) {
                device = line.substring("hca_id:".length()).strip();
                if (device.isEmpty()) {
                    throw new FactsParseException("ibv_devinfo", "line " + (index + 1) + ": hca_id without a device name");
                }
            } else if (line.startsWith("state:")) {
                if (device == null) {
                    throw new FactsParseException("ibv_devinfo", "line " + (index + 1) + ": a port state before any hca_id line");
                }
                String state = line.substring("state:".length()).strip().split("\\s+")[0];
                if (!state.startsWith("PORT_")) {
                    throw new FactsParseException("ibv_devinfo", "line " + (index + 1) + ": expected a port state such as PORT_ACTIVE (4), got '" + abbreviate(line) + "'");
                }
                if (!"PORT_ACTIVE".equals(states.get(device))) {
                    states.put(device, state);
                }
            }
        }
        if (device == null && !output.isBlank()) {
            throw new FactsParseException("ibv_devinfo", "no 'hca_id:' line, got '" + abbreviate(output.strip()) + "'");
        }
        return states;
    }

    /**
     * Whether {@code bridge0} (the Thunderbolt Bridge) is up in {@code ifconfig} output. RDMA over
     * Thunderbolt needs it down: with several cables it also forms a switching loop.
     */
    public static boolean bridgeActive(String ifconfigOutput) {
        boolean inBridge = false;
        boolean up = false;
        boolean statusInactive = false;
        for (String line : ifconfigOutput.split("\\R")) {
            if (!line.isEmpty() && !Character.isWhitespace(line.charAt(0))) {
                if (inBridge) {
                    break;
                }
                inBridge = line.startsWith("bridge0:");
                if (inBridge) {
                    int flagsStart = line.indexOf('<');
                    int flagsEnd = line.indexOf('>');
                    up = flagsStart >= 0 && flagsEnd > flagsStart
                            && List.of(line.substring(flagsStart + 1, flagsEnd).split(",")).contains("UP");
                }
            } else if (inBridge && line.strip().startsWith("status:")) {
                statusInactive = line.strip().equals("status: inactive");
            }
        }
        return up && !statusInactive;
    }

    /** {@code sysctl hw.memsize}: "hw.memsize: 549755813888". */
    public static long memorySize(String output) {
        String text = output.strip();
        if (!text.startsWith("hw.memsize:")) {
            throw new FactsParseException("sysctl hw.memsize", "expected 'hw.memsize: BYTES', got '" + abbreviate(text) + "'");
        }
        try {
            return Long.parseLong(text.substring("hw.memsize:".length()).strip());
        } catch (NumberFormatException e) {
            throw new FactsParseException("sysctl hw.memsize", "expected a number of bytes, got '" + abbreviate(text) + "'");
        }
    }

    /**
     * {@code sysctl iogpu.wired_limit_mb}: "iogpu.wired_limit_mb: 0" (0: macOS's default share; a bare number as
     * {@code -n} prints it is read too); empty output (the name unknown to that macOS) is empty.
     */
    public static java.util.OptionalLong wiredLimitMegabytes(String output) {
        String text = output.strip();
        if (text.isEmpty()) {
            return java.util.OptionalLong.empty();
        }
        String value = text.startsWith("iogpu.wired_limit_mb:") ? text.substring("iogpu.wired_limit_mb:".length()).strip() : text;
        if (!value.matches("\\d{1,12}")) {
            throw new FactsParseException("sysctl iogpu.wired_limit_mb", "expected 'iogpu.wired_limit_mb: MEGABYTES', got '" + abbreviate(text) + "'");
        }
        return java.util.OptionalLong.of(Long.parseLong(value));
    }

    private static String abbreviate(String text) {
        String firstLine = text.lines().findFirst().orElse("");
        return firstLine.length() > 80 ? firstLine.substring(0, 80) + "..." : firstLine;
    }
}
