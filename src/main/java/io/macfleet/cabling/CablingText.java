package io.macfleet.cabling;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;

/**
 * The cabling report as a person reads it (text) and as a script reads it (JSON).
 */
public final class CablingText {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private CablingText() {
    }

    public static String text(CablingReport report) {
        StringBuilder text = new StringBuilder();
        long confirmed = report.links().stream().filter(ObservedLink::confirmed).count();
        text.append("Cabling of cluster ").append(report.cluster()).append(": ").append(report.machines().size())
                .append(" machines, ").append(confirmed).append(" cables seen from both sides\n\n");
        if (!report.links().isEmpty()) {
            text.append("Cables:\n");
            for (ObservedLink link : report.links()) {
                text.append(String.format(Locale.ROOT, "  %-34s %-16s %s%n", link.toString(),
                        link.speed().map(Object::toString).orElse("?"), link.confirmed() ? (link.isThunderbolt5() ? "ok" : "slow") : "one side only"));
            }
            text.append('\n');
        }
        // A Mac at the far end of a cable, while some Mac of the cluster has no facts, is most likely that Mac.
        java.util.List<String> withoutFacts = report.findings().stream().filter(finding -> finding.code() == Finding.Code.MISSING_FACTS)
                .flatMap(finding -> finding.machines().stream()).distinct().toList();
        for (ObservedTopology.ForeignAttachment attachment : report.foreignAttachments()) {
            text.append("  ").append(attachment.port()).append(" -> ").append(attachment.device().describe())
                    .append(attachment.device().isHost() && !withoutFacts.isEmpty()
                            ? " (probably " + String.join(" or ", withoutFacts) + ", whose facts are missing)\n" : " (not in the cluster)\n");
        }
        if (!report.foreignAttachments().isEmpty()) {
            text.append('\n');
        }
        if (report.findings().isEmpty()) {
            text.append("No findings.\n");
        } else {
            text.append("Findings (").append(report.count(Finding.Severity.ERROR)).append(" errors, ")
                    .append(report.count(Finding.Severity.WARNING)).append(" warnings):\n");
            for (Finding finding : report.findings()) {
                text.append(String.format(Locale.ROOT, "  %-7s %-22s %s%n", finding.severity(), code(finding.code()), finding.message()));
                text.append(String.format(Locale.ROOT, "  %-7s %-22s fix: %s%n", "", "", finding.fix()));
            }
        }
        text.append("\nVerdict: ").append(report.verdict()).append('\n');
        return text.toString();
    }

    public static String json(CablingReport report) {
        ObjectNode root = JSON.createObjectNode();
        root.put("cluster", report.cluster());
        root.put("passed", report.passed());
        root.put("verdict", report.verdict());
        root.put("fullMesh", report.fullMesh());
        report.machines().forEach(root.putArray("machines")::add);
        report.largestMeshedSubset().forEach(root.putArray("largestMeshedSubset")::add);
        ArrayNode ring = root.putArray("ring");
        report.ringOrder().ifPresent(order -> order.forEach(ring::add));
        ArrayNode links = root.putArray("links");
        for (ObservedLink link : report.links()) {
            ObjectNode node = links.addObject();
            node.put("first", link.first().toString());
            node.put("second", link.second().toString());
            node.put("confirmed", link.confirmed());
            link.speed().ifPresent(speed -> node.put("speedGbps", speed.gigabitsPerSecond()));
            node.put("thunderbolt5", link.isThunderbolt5());
        }
        ArrayNode foreign = root.putArray("foreignAttachments");
        for (ObservedTopology.ForeignAttachment attachment : report.foreignAttachments()) {
            ObjectNode node = foreign.addObject();
            node.put("port", attachment.port().toString());
            node.put("device", attachment.device().describe());
            node.put("mac", attachment.device().isHost());
        }
        ArrayNode findings = root.putArray("findings");
        for (Finding finding : report.findings()) {
            ObjectNode node = findings.addObject();
            node.put("severity", finding.severity().name().toLowerCase(Locale.ROOT));
            node.put("code", code(finding.code()));
            finding.machines().forEach(node.putArray("machines")::add);
            ArrayNode ports = node.putArray("ports");
            finding.ports().forEach(port -> ports.add(port.toString()));
            node.put("message", finding.message());
            node.put("fix", finding.fix());
        }
        try {
            return JSON.writeValueAsString(root) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static String code(Finding.Code code) {
        return code.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
