package io.macfleet.cabling;

import io.macfleet.inventory.PortReference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Draws a cluster's cabling as SVG: machines as boxes on a circle, cables as lines coloured by state, port
 * numbers at both ends, planned cables that are missing as dashed red lines, foreign devices as grey tags.
 * Each cable carries {@code data-state} and {@code data-ports} attributes so that the console and tests
 * can find it.
 */
public final class CablingSvg {
    private static final int SIZE = 640;
    private static final int WIDTH = 760;
    private static final int CENTRE_X = WIDTH / 2;
    private static final int CENTRE = SIZE / 2;
    private static final int RADIUS = 220;
    private static final int BOX_WIDTH = 128;
    private static final int BOX_HEIGHT = 40;

    /** State of a drawn cable; the colour and the legend text follow from it. */
    public enum State {
        OK("#2e7d32", "Thunderbolt 5, both sides agree"),
        SLOW("#ef6c00", "slower than Thunderbolt 5"),
        ONE_SIDED("#8e24aa", "seen from one side only"),
        MISSING("#c62828", "planned, not cabled"),
        EXTRA("#757575", "extra or not planned"),
        RDMA_INCAPABLE("#ad1457", "in a port that cannot carry RDMA"),
        /** A cable of a port plan: nothing has been observed, so it is neither green nor a problem. */
        PLANNED("#1565c0", "planned, not yet observed");

        final String colour;
        final String meaning;

        State(String colour, String meaning) {
            this.colour = colour;
            this.meaning = meaning;
        }
    }

    private CablingSvg() {
    }

    public static String render(CablingReport report) {
        List<State> legend = java.util.Arrays.stream(State.values()).filter(state -> state != State.PLANNED).toList();
        return render(report, edges(report), legend, false);
    }

    /**
     * A port plan: its cables drawn as planned (blue, dashed), never as observed and agreeing, since nothing has been
     * seen yet; the machines in a neutral colour.
     */
    public static String renderPlan(String cluster, List<String> machines, List<io.macfleet.inventory.Topology.Link> cables) {
        CablingReport plan = new CablingReport(cluster, machines, List.of(), List.of(), List.of(), false, List.of(), java.util.Optional.empty(),
                "port plan (" + cables.size() + " cables, none observed yet: macfleet cabling check after cabling)");
        Map<String, Integer> perPair = new LinkedHashMap<>();
        List<Edge> edges = new ArrayList<>();
        for (io.macfleet.inventory.Topology.Link cable : cables) {
            int index = perPair.merge(cable.first().machine() + "|" + cable.second().machine(), 1, Integer::sum) - 1;
            edges.add(new Edge(cable.first(), cable.second(), State.PLANNED, index));
        }
        return render(plan, edges, List.of(State.PLANNED), true);
    }

    private static String render(CablingReport report, List<Edge> edges, List<State> legend, boolean plan) {
        Map<String, double[]> centres = new LinkedHashMap<>();
        List<String> machines = report.machines();
        for (int index = 0; index < machines.size(); index++) {
            double angle = -Math.PI / 2 + 2 * Math.PI * index / Math.max(1, machines.size());
            centres.put(machines.get(index), new double[] {CENTRE_X + RADIUS * Math.cos(angle), CENTRE + RADIUS * Math.sin(angle)});
        }
        StringBuilder svg = new StringBuilder();
        svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"").append(SIZE + 130)
                .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(SIZE + 130).append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
        svg.append("<title>Cabling of cluster ").append(escape(report.cluster())).append(": ").append(escape(report.verdict())).append("</title>\n");
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
        for (Edge edge : edges) {
            double[] from = centres.get(edge.first().machine());
            double[] to = centres.get(edge.second().machine());
            if (from == null || to == null) {
                continue;
            }
            double offset = edge.parallelIndex() * 10.0;
            double dx = to[0] - from[0];
            double dy = to[1] - from[1];
            double length = Math.max(1, Math.hypot(dx, dy));
            double nx = -dy / length * offset;
            double ny = dx / length * offset;
            double x1 = from[0] + nx;
            double y1 = from[1] + ny;
            double x2 = to[0] + nx;
            double y2 = to[1] + ny;
            svg.append("<g class=\"cable\" data-state=\"").append(edge.state().name().toLowerCase(Locale.ROOT).replace('_', '-'))
                    .append("\" data-ports=\"").append(escape(edge.first() + " " + edge.second())).append("\">");
            svg.append("<title>").append(escape(edge.first() + " <-> " + edge.second() + ": " + edge.state().meaning)).append("</title>");
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"%s/>",
                    x1, y1, x2, y2, edge.state().colour,
                    edge.state() == State.MISSING || edge.state() == State.ONE_SIDED || edge.state() == State.PLANNED ? " stroke-dasharray=\"8 6\"" : ""));
            portLabel(svg, x1 + dx * 0.24, y1 + dy * 0.24, edge.first().port());
            portLabel(svg, x1 + dx * 0.76, y1 + dy * 0.76, edge.second().port());
            svg.append("</g>\n");
        }
        for (ObservedTopology.ForeignAttachment attachment : report.foreignAttachments()) {
            double[] centre = centres.get(attachment.port().machine());
            if (centre == null) {
                continue;
            }
            double outX = centre[0] + (centre[0] - CENTRE_X) * 0.22;
            double outY = centre[1] + (centre[1] - CENTRE) * 0.22 + 34;
            svg.append("<g class=\"foreign\" data-ports=\"").append(escape(attachment.port().toString())).append("\">");
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9e9e9e\" stroke-width=\"2\"/>",
                    centre[0], centre[1], outX, outY));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#616161\">port %d: %s</text>",
                    outX, outY + 14, attachment.port().port(), escape(attachment.device().describe())));
            svg.append("</g>\n");
        }
        for (Map.Entry<String, double[]> machine : centres.entrySet()) {
            double x = machine.getValue()[0] - BOX_WIDTH / 2.0;
            double y = machine.getValue()[1] - BOX_HEIGHT / 2.0;
            boolean problem = report.findings().stream().anyMatch(finding -> finding.severity() == Finding.Severity.ERROR
                    && finding.machines().contains(machine.getKey()));
            svg.append("<g class=\"machine\" data-machine=\"").append(escape(machine.getKey())).append("\">");
            svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"8\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"/>",
                    x, y, BOX_WIDTH, BOX_HEIGHT, plan ? "#f5f5f5" : problem ? "#ffebee" : "#e8f5e9", plan ? "#424242" : problem ? "#c62828" : "#2e7d32"));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>",
                    machine.getValue()[0], machine.getValue()[1] + 4, escape(machine.getKey())));
            svg.append("</g>\n");
        }
        int legendY = SIZE + 10;
        int column = 0;
        for (State state : legend) {
            int x = 16 + (column % 3) * 245;
            int y = legendY + (column / 3) * 22;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>", x, y + 8, x + 24, y + 8, state.colour));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 30, y + 12, escape(state.meaning)));
            column++;
        }
        int line = 0;
        for (String part : (report.cluster() + ": " + report.verdict()).split("; ")) {
            svg.append(String.format(Locale.ROOT, "<text x=\"16\" y=\"%d\" fill=\"%s\">%s</text>\n", legendY + 66 + 16 * line++,
                    plan ? "#424242" : report.passed() ? "#2e7d32" : "#c62828", escape(part)));
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private record Edge(PortReference first, PortReference second, State state, int parallelIndex) {
    }

    private static List<Edge> edges(CablingReport report) {
        List<Edge> edges = new ArrayList<>();
        Map<String, Integer> perPair = new LinkedHashMap<>();
        for (ObservedLink link : report.links()) {
            String pair = link.first().machine() + "|" + link.second().machine();
            int index = perPair.merge(pair, 1, Integer::sum) - 1;
            edges.add(new Edge(link.first(), link.second(), stateOf(report, link), index));
        }
        for (Finding finding : report.findings()) {
            if (finding.code() == Finding.Code.MISSING_LINK && finding.machines().size() == 2) {
                PortReference first = finding.ports().size() == 2 ? finding.ports().get(0) : new PortReference(finding.machines().get(0), 0);
                PortReference second = finding.ports().size() == 2 ? finding.ports().get(1) : new PortReference(finding.machines().get(1), 0);
                edges.add(new Edge(first, second, State.MISSING, 0));
            }
        }
        return edges;
    }

    private static State stateOf(CablingReport report, ObservedLink link) {
        if (!link.confirmed()) {
            return State.ONE_SIDED;
        }
        for (Finding finding : report.findings()) {
            boolean about = finding.ports().contains(link.first()) || finding.ports().contains(link.second());
            if (!about) {
                continue;
            }
            switch (finding.code()) {
                case RDMA_INCAPABLE_PORT -> {
                    return State.RDMA_INCAPABLE;
                }
                case SLOW_LINK -> {
                    return State.SLOW;
                }
                case UNPLANNED_LINK, DUPLICATE_LINK, WRONG_PORTS -> {
                    return State.EXTRA;
                }
                default -> {
                }
            }
        }
        return link.isThunderbolt5() ? State.OK : State.SLOW;
    }

    private static void portLabel(StringBuilder svg, double x, double y, int port) {
        if (port <= 0) {
            return;
        }
        svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"9\" fill=\"#ffffff\" stroke=\"#424242\"/>", x, y));
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%d</text>", x, y + 4, port));
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
