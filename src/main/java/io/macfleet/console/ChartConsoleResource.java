package io.macfleet.console;

import io.macfleet.charts.ChartHistory;
import io.macfleet.charts.ChartRange;
import io.macfleet.charts.LineChart;
import io.macfleet.inventory.DesiredStateStore;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * The charts of the cluster and machine pages: a panel that htmx loads with the page and fetches again every 15 s
 * (the panel replaces itself, so the hour/day choice stays with the next refresh).
 */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class ChartConsoleResource {

    @CheckedTemplate(basePath = "console")
    static final class ChartTemplates {
        static native TemplateInstance charts(Panel panel);
    }

    /** One chart: its SVG (escaped by {@link LineChart}) and its last values in words. */
    public record ChartView(String id, String title, String svg, String lastValues, List<Legend> legend) {
    }

    public record Legend(String label, int index) {
    }

    /** A range button: its label, the panel's URL for it, and whether it is the one shown. */
    public record RangeChoice(String label, String url, boolean current) {
    }

    /**
     * @param id the panel's element id, which its range buttons target
     * @param url what the panel fetches to refresh itself (with its range)
     */
    public record Panel(String id, String heading, String url, String rangeWords, List<RangeChoice> ranges, List<ChartView> charts) {
    }

    private final ChartHistory history;
    private final DesiredStateStore desiredState;
    private final ConsoleFrame frame;

    @Inject
    public ChartConsoleResource(ChartHistory history, DesiredStateStore desiredState, ConsoleFrame frame) {
        this.history = history;
        this.desiredState = desiredState;
        this.frame = frame;
    }

    @GET
    @Path("clusters/{name}/charts")
    public Response cluster(@PathParam("name") String name, @QueryParam("range") String range) {
        if (desiredState.cluster(name).isEmpty()) {
            return frame.error(404, "Cluster not found", "There is no cluster named '" + name + "' in the applied inventory.",
                    "/console/clusters", "Back to the clusters");
        }
        return panel("cluster-charts", "Inference", "/console/clusters/" + encode(name) + "/charts", name, range, history::cluster);
    }

    @GET
    @Path("machines/{name}/charts")
    public Response machine(@PathParam("name") String name, @QueryParam("range") String range) {
        if (desiredState.machine(name).isEmpty()) {
            return frame.error(404, "Machine not found", "There is no machine named '" + name + "' in the applied inventory.",
                    "/console", "Back to the fleet overview");
        }
        return panel("machine-charts", "Health", "/console/machines/" + encode(name) + "/charts", name, range, history::machine);
    }

    private Response panel(String id, String heading, String base, String subject, String rangeText,
                           BiFunction<String, ChartRange, List<LineChart.Chart>> charts) {
        Optional<ChartRange> range = ChartRange.parse(rangeText);
        if (range.isEmpty()) {
            return frame.error(400, "Unknown range", "The range '" + rangeText + "' is not one of: hour, day.", base.replace("/charts", ""),
                    "Back");
        }
        List<RangeChoice> ranges = java.util.Arrays.stream(ChartRange.values())
                .map(choice -> new RangeChoice(choice == ChartRange.HOUR ? "Last hour" : "Last day", base + "?range=" + choice.parameter(),
                        choice == range.get()))
                .toList();
        List<ChartView> views = charts.apply(subject, range.get()).stream()
                .map(chart -> new ChartView(chart.id(), chart.title(), LineChart.svg(chart), chart.lastValues(),
                        chart.lines().size() > 1 ? chart.lines().stream().map(line -> new Legend(line.label(), line.index())).toList() : List.of()))
                .toList();
        return ConsoleSupport.live(ChartTemplates.charts(new Panel(id, heading, base + "?range=" + range.get().parameter(),
                range.get().words(), ranges, views)));
    }

    private static String encode(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
