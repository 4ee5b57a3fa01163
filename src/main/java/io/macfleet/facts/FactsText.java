package io.macfleet.facts;

import java.util.Locale;

/** Facts as text for people. */
public final class FactsText {

    private FactsText() {
    }

    public static String text(MachineFacts facts) {
        StringBuilder out = new StringBuilder();
        line(out, "machine", facts.machine());
        line(out, "observed", facts.observedAt().toString());
        line(out, "model", facts.modelName() + " (" + facts.modelIdentifier() + ")");
        line(out, "chip", facts.chip() + ", " + facts.cpuCores() + " CPU cores"
                + (facts.performanceCores() == null ? "" : " (" + facts.performanceCores() + " performance, " + facts.efficiencyCores() + " efficiency)"));
        line(out, "GPU", facts.gpuCores() + " cores");
        line(out, "memory", facts.memoryGigabytes() + " GB");
        line(out, "serial number", facts.serialNumber());
        line(out, "hardware UUID", facts.hardwareUuid());
        line(out, "macOS", facts.macosVersion() + " (" + facts.macosBuild() + ")");
        line(out, "RDMA", (facts.rdmaEnabled() ? "enabled" : "disabled") + (facts.rdmaDevices().isEmpty() ? ", no devices" : ", devices " + String.join(" ", facts.rdmaDevices())));
        line(out, "Thunderbolt Bridge", facts.thunderboltBridgeActive() ? "active" : "inactive");
        line(out, "bootstrap token", facts.read(FactsGatherer.BOOTSTRAP_TOKEN_FACT)
                ? "supported on server: " + yes(facts.bootstrapTokenSupportedOnServer()) + ", escrowed: " + yes(facts.bootstrapTokenEscrowed())
                : "unknown (unreadable)");
        long uptime = facts.uptimeSeconds();
        line(out, "uptime", facts.read(FactsGatherer.UPTIME_FACT)
                ? String.format(Locale.ROOT, "%d days %d:%02d", uptime / 86400, (uptime / 3600) % 24, (uptime / 60) % 60) : "unknown (unreadable)");
        line(out, "free disk", String.format(Locale.ROOT, "%.1f GB", facts.freeDiskBytes() / 1e9));
        if (!facts.unreadableFacts().isEmpty()) {
            out.append("unreadable facts (the others above were read):\n");
            facts.unreadableFacts().forEach((fact, reason) -> out.append("  ").append(fact).append(": ").append(reason).append('\n'));
        }
        out.append("Thunderbolt ports:\n");
        for (MachineFacts.ThunderboltPort port : facts.thunderboltPorts()) {
            out.append(String.format(Locale.ROOT, "  port %d %-5s %s", port.port(), port.interfaceName() == null ? "?" : port.interfaceName(),
                    port.connected() ? "connected" : "empty"));
            if (port.speedGbps() != null) {
                out.append(String.format(Locale.ROOT, " %.0f Gb/s", port.speedGbps()));
            }
            if (port.peerModel() != null) {
                out.append(" to ").append(port.peerMachine() != null ? port.peerMachine() + " port " + port.peerPort() : "a Mac")
                        .append(" (").append(port.peerModel()).append(')');
            }
            if (!port.otherDevices().isEmpty()) {
                out.append(" devices: ").append(String.join(", ", port.otherDevices()));
            }
            out.append('\n');
        }
        out.append("interfaces:\n");
        for (NetworkInterface face : facts.interfaces()) {
            if (face.ipv4().isEmpty() && face.ipv6().isEmpty() && !"active".equals(face.status())) {
                continue;
            }
            out.append(String.format(Locale.ROOT, "  %-8s %-8s %s%n", face.name(), face.status() == null ? (face.up() ? "up" : "down") : face.status(),
                    String.join(" ", face.ipv4()) + (face.ipv6().isEmpty() ? "" : " " + String.join(" ", face.ipv6()))));
        }
        return out.toString();
    }

    private static String yes(boolean value) {
        return value ? "yes" : "no";
    }

    private static void line(StringBuilder out, String label, String value) {
        out.append(String.format(Locale.ROOT, "%-20s %s%n", label + ":", value));
    }
}
