package io.macfleet.charts;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.charts.LineChart.Chart;
import io.macfleet.charts.LineChart.Line;
import io.macfleet.charts.LineChart.Scale;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.jsoup.parser.Parser;
import org.junit.jupiter.api.Test;

/** The SVG text: values at their coordinates, gaps left open, the empty state, units, time labels and accessible names. */
class LineChartTest {

    private static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");

    private static MetricHistory.Point point(int secondsBeforeNow, double value) {
        return new MetricHistory.Point(NOW.minusSeconds(secondsBeforeNow), value);
    }

    private static Document parse(String svg) {
        return Jsoup.parse(svg, "", Parser.xmlParser());
    }

    @Test
    void valuesMapToCoordinatesOnARoundAxisFromZero() {
        // 15 s slots: a point is drawn at its slot's middle; the axis runs 0..40 for a largest value of 40 (ticks of 10).
        List<MetricHistory.Point> points = List.of(point(3600, 10), point(3585, 20), point(1800, 40), point(1785, 30));
        Chart chart = new Chart("chart-t", "Tokens per second", "cluster llm-a", ChartRange.HOUR, NOW, new Scale("tokens/s", 1),
                List.of(new Line("tokens/s", 0, points)));
        Document svg = parse(LineChart.svg(chart));

        assertThat(svg.select("text.chart-label").eachText()).contains("0", "10", "20", "30", "40");
        List<Element> paths = svg.select("path.chart-line-0");
        assertThat(paths).hasSize(2); // the half hour without data between them is a gap, not a line
        double left = LineChart.LEFT;
        double width = LineChart.PLOT_WIDTH;
        double bottom = LineChart.TOP + LineChart.PLOT_HEIGHT;
        double height = LineChart.PLOT_HEIGHT;
        String first = "M" + LineChart.coordinate(left + 7.5 / 3600 * width) + " " + LineChart.coordinate(bottom - 10.0 / 40 * height)
                + " L" + LineChart.coordinate(left + 22.5 / 3600 * width) + " " + LineChart.coordinate(bottom - 20.0 / 40 * height);
        assertThat(paths.get(0).attr("d")).isEqualTo(first);
        assertThat(paths.get(1).attr("d")).startsWith("M" + LineChart.coordinate(left + 1807.5 / 3600 * width) + " "
                + LineChart.coordinate(LineChart.TOP));
        assertThat(svg.selectFirst("text.chart-unit").text()).isEqualTo("tokens/s");
        assertThat(svg.selectFirst("text.chart-last").text()).isEqualTo("last: 30.0 tokens/s at 11:30 UTC");
    }

    @Test
    void aSingleSlotBetweenGapsIsADotAndTheTimeAxisHasUtcLabels() {
        Chart chart = new Chart("chart-p", "Package power", "studio-01", ChartRange.HOUR, NOW, new Scale("W", 1),
                List.of(new Line("power", 0, List.of(point(600, 120)))));
        Document svg = parse(LineChart.svg(chart));
        assertThat(svg.select("path")).isEmpty();
        assertThat(svg.select("circle.chart-line-0")).hasSize(1);
        assertThat(svg.select("text.chart-time").eachText()).containsExactly("11:15", "11:30", "11:45", "12:00");
        assertThat(svg.select("text.chart-label").eachText()).contains("UTC");
    }

    @Test
    void emptyChartSaysThereIsNoDataAndStillHasItsAxes() {
        Chart chart = new Chart("chart-e", "Temperature", "studio-02", ChartRange.DAY, NOW, new Scale("°C", 1),
                List.of(new Line("CPU", 0, List.of()), new Line("GPU", 1, List.of())));
        Document svg = parse(LineChart.svg(chart));
        assertThat(svg.selectFirst("svg").attr("data-empty")).isEqualTo("true");
        assertThat(svg.selectFirst("text.chart-empty").text()).isEqualTo("No data in the last day");
        assertThat(svg.select("path, circle")).isEmpty();
        assertThat(svg.select("text.chart-time").eachText()).contains("00:00", "04:00", "08:00", "12:00");
        assertThat(chart.lastValues()).isEqualTo("no data in the last day");
    }

    @Test
    void titleAndDescriptionNameTheChartForScreenReadersAndTextIsEscaped() {
        List<MetricHistory.Point> points = new ArrayList<>();
        for (int slot = 0; slot < 20; slot++) {
            points.add(point(300 - slot * 15, 0.5 + slot * 0.01));
        }
        Chart chart = new Chart("chart-x", "Time to first token", "cluster <a&b>", ChartRange.HOUR, NOW, new Scale("s", 1),
                List.of(new Line("ttft", 0, points)));
        String text = LineChart.svg(chart);
        assertThat(text).doesNotContain("<a&b>").contains("cluster &lt;a&amp;b&gt;");
        Document svg = parse(text);
        Element root = svg.selectFirst("svg");
        assertThat(root.attr("role")).isEqualTo("img");
        assertThat(root.attr("aria-labelledby")).isEqualTo("chart-x-title chart-x-description");
        assertThat(svg.selectFirst("title#chart-x-title").text()).isEqualTo("Time to first token, cluster <a&b>, last hour");
        assertThat(svg.selectFirst("desc#chart-x-description").text()).isEqualTo("Last value 0.690 s at 11:59 UTC; axis from 0.0 to 0.8 s.");
        assertThat(svg.select("path.chart-line-0")).hasSize(1);
    }

    @Test
    void twoLinesShareTheAxisAndTheScaleConvertsUnits() {
        double gibibyte = 1024.0 * 1024 * 1024;
        Chart chart = new Chart("chart-w", "Wired memory and its limit", "studio-01", ChartRange.HOUR, NOW, new Scale("GiB", 1 / gibibyte),
                List.of(new Line("wired", 0, List.of(point(60, 100 * gibibyte), point(45, 120 * gibibyte))),
                        new Line("limit", 2, List.of(point(60, 180 * gibibyte), point(45, 180 * gibibyte)))));
        Document svg = parse(LineChart.svg(chart));
        assertThat(svg.select("text.chart-label").eachText()).contains("0", "50", "100", "150", "200");
        String limit = svg.selectFirst("path.chart-line-2").attr("d");
        String expectedY = LineChart.coordinate(LineChart.TOP + LineChart.PLOT_HEIGHT - 180.0 / 200 * LineChart.PLOT_HEIGHT);
        assertThat(limit).endsWith(" " + expectedY);
        assertThat(chart.lastValues()).isEqualTo("120 GiB (wired), 180 GiB (limit) at 11:59 UTC");
    }

    @Test
    void roundSteps() {
        assertThat(LineChart.roundStep(7)).isEqualTo(10);
        assertThat(LineChart.roundStep(0.3)).isEqualTo(0.5);
        assertThat(LineChart.roundStep(2.2)).isEqualTo(2.5);
        assertThat(LineChart.roundStep(18)).isEqualTo(20);
        assertThat(Duration.ofHours(1).dividedBy(ChartRange.HOUR.resolution())).isEqualTo(240);
    }
}
