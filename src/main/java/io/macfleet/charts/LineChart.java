package io.macfleet.charts;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A line chart as SVG text, drawn on the server: a y axis from zero with round ticks in the chart's unit, a time axis
 * with UTC labels, one path per line broken where slots are missing (no line drawn across a gap), a lone point as a
 * dot, the last value written in the corner, and a title and description for screen readers. Pure: the same input
 * gives the same text, so tests read coordinates from it.
 */
public final class LineChart {

    /** Geometry of the drawing, in SVG user units. */
    static final int WIDTH = 560;
    static final int HEIGHT = 200;
    static final int LEFT = 56;
    static final int RIGHT = 16;
    static final int TOP = 24;
    static final int BOTTOM = 30;
    static final int PLOT_WIDTH = WIDTH - LEFT - RIGHT;
    static final int PLOT_HEIGHT = HEIGHT - TOP - BOTTOM;

    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm", Locale.ROOT).withZone(ZoneOffset.UTC);

    /**
     * How values are shown: multiplied by {@code factor} and followed by {@code unit} ("°C", "GiB", "tokens/s").
     */
    public record Scale(String unit, double factor) {
        public static final Scale NONE = new Scale("", 1);

        double apply(double value) {
            return value * factor;
        }
    }

    /** One line of the chart; {@code index} picks its colour (CSS class {@code chart-line-N}). */
    public record Line(String label, int index, List<MetricHistory.Point> points) {
        public Line {
            points = List.copyOf(points);
        }

        public boolean empty() {
            return points.isEmpty();
        }

        MetricHistory.Point last() {
            return points.getLast();
        }
    }

    /**
     * @param id    unique in the page (ids of the title and description are derived from it)
     * @param title "Tokens per second"; the description adds the subject and the range
     * @param about what the chart is about: "cluster llm-a", "studio-01"
     */
    public record Chart(String id, String title, String about, ChartRange range, Instant now, Scale scale, List<Line> lines) {
        public Chart {
            lines = List.copyOf(lines);
        }

        public boolean empty() {
            return lines.stream().allMatch(Line::empty);
        }

        /** "61.2 °C (CPU), 58.0 °C (GPU) at 17:45 UTC", or "no data in the last hour". */
        public String lastValues() {
            if (empty()) {
                return "no data in the " + range.words();
            }
            List<String> parts = new ArrayList<>();
            Instant newest = Instant.EPOCH;
            for (Line line : lines) {
                if (line.empty()) {
                    continue;
                }
                String value = number(scale.apply(line.last().value()), decimalsFor(scale.apply(line.last().value()))) + unitSuffix(scale);
                parts.add(lines.size() > 1 ? value + " (" + line.label() + ")" : value);
                if (line.last().at().isAfter(newest)) {
                    newest = line.last().at();
                }
            }
            return String.join(", ", parts) + " at " + CLOCK.format(newest) + " UTC";
        }
    }

    private LineChart() {
    }

    public static String svg(Chart chart) {
        Instant to = chart.now();
        Instant from = to.minus(chart.range().span());
        Axis axis = axis(chart);
        String titleId = chart.id() + "-title";
        String descriptionId = chart.id() + "-description";
        StringBuilder svg = new StringBuilder();
        svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"").append(escape(chart.id()))
                .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
                .append("\" role=\"img\" aria-labelledby=\"").append(escape(titleId)).append(' ').append(escape(descriptionId))
                .append("\" data-empty=\"").append(chart.empty()).append("\">");
        svg.append("<title id=\"").append(escape(titleId)).append("\">").append(escape(chart.title() + ", " + chart.about() + ", " + chart.range().words()))
                .append("</title>");
        svg.append("<desc id=\"").append(escape(descriptionId)).append("\">").append(escape(description(chart, axis))).append("</desc>");

        // Horizontal grid lines with the y axis labels.
        for (double tick : axis.ticks()) {
            double y = y(tick, axis);
            svg.append("<line class=\"chart-grid\" x1=\"").append(LEFT).append("\" x2=\"").append(LEFT + PLOT_WIDTH)
                    .append("\" y1=\"").append(coordinate(y)).append("\" y2=\"").append(coordinate(y)).append("\" stroke=\"#d0d7de\"/>");
            svg.append("<text class=\"chart-label\" x=\"").append(LEFT - 6).append("\" y=\"").append(coordinate(y + 4))
                    .append("\" text-anchor=\"end\">").append(escape(number(tick, axis.decimals()))).append("</text>");
        }
        svg.append("<text class=\"chart-unit\" x=\"").append(LEFT - 6).append("\" y=\"").append(TOP - 10).append("\" text-anchor=\"end\">")
                .append(escape(chart.scale().unit())).append("</text>");

        // Time labels at round times (every 15 minutes for an hour, every 4 hours for a day).
        long every = chart.range().labelEvery().toSeconds();
        for (long second = Math.floorDiv(from.getEpochSecond(), every) * every + every; second <= to.getEpochSecond(); second += every) {
            double x = x(Instant.ofEpochSecond(second), from, chart.range());
            svg.append("<line class=\"chart-tick\" x1=\"").append(coordinate(x)).append("\" x2=\"").append(coordinate(x))
                    .append("\" y1=\"").append(TOP + PLOT_HEIGHT).append("\" y2=\"").append(TOP + PLOT_HEIGHT + 4).append("\" stroke=\"#57606a\"/>");
            svg.append("<text class=\"chart-label chart-time\" x=\"").append(coordinate(x)).append("\" y=\"").append(HEIGHT - 10)
                    .append("\" text-anchor=\"middle\">").append(CLOCK.format(Instant.ofEpochSecond(second))).append("</text>");
        }
        svg.append("<text class=\"chart-label\" x=\"").append(LEFT - 6).append("\" y=\"").append(HEIGHT - 10)
                .append("\" text-anchor=\"end\">UTC</text>");
        svg.append("<line class=\"chart-axis\" x1=\"").append(LEFT).append("\" x2=\"").append(LEFT + PLOT_WIDTH).append("\" y1=\"")
                .append(TOP + PLOT_HEIGHT).append("\" y2=\"").append(TOP + PLOT_HEIGHT).append("\" stroke=\"#57606a\"/>");

        if (chart.empty()) {
            svg.append("<text class=\"chart-empty\" x=\"").append(LEFT + PLOT_WIDTH / 2).append("\" y=\"").append(TOP + PLOT_HEIGHT / 2)
                    .append("\" text-anchor=\"middle\">").append(escape("No data in the " + chart.range().words())).append("</text>");
        }
        for (Line line : chart.lines()) {
            drawLine(svg, chart, line, from, axis);
        }
        if (!chart.empty()) {
            svg.append("<text class=\"chart-last\" x=\"").append(WIDTH - RIGHT).append("\" y=\"").append(TOP - 10)
                    .append("\" text-anchor=\"end\">").append(escape("last: " + chart.lastValues())).append("</text>");
        }
        return svg.append("</svg>").toString();
    }

    /**
     * A path per run of consecutive slots; a missing slot or more ends the run, so a gap stays a gap. Each point is
     * drawn at the middle of its slot.
     */
    private static void drawLine(StringBuilder svg, Chart chart, Line line, Instant from, Axis axis) {
        Duration resolution = chart.range().resolution();
        List<List<MetricHistory.Point>> runs = new ArrayList<>();
        List<MetricHistory.Point> run = new ArrayList<>();
        MetricHistory.Point previous = null;
        for (MetricHistory.Point point : line.points()) {
            if (point.at().isBefore(from)) {
                continue;
            }
            if (previous != null && Duration.between(previous.at(), point.at()).compareTo(resolution) > 0) {
                runs.add(run);
                run = new ArrayList<>();
            }
            run.add(point);
            previous = point;
        }
        if (!run.isEmpty()) {
            runs.add(run);
        }
        String css = "chart-line chart-line-" + line.index();
        for (List<MetricHistory.Point> points : runs) {
            if (points.size() == 1) {
                MetricHistory.Point point = points.getFirst();
                svg.append("<circle class=\"").append(css).append("\" cx=\"").append(coordinate(x(middle(point, resolution), from, chart.range())))
                        .append("\" cy=\"").append(coordinate(y(chart.scale().apply(point.value()), axis))).append("\" r=\"3.5\"/>");
                continue;
            }
            StringBuilder path = new StringBuilder();
            for (MetricHistory.Point point : points) {
                path.append(path.isEmpty() ? "M" : " L").append(coordinate(x(middle(point, resolution), from, chart.range()))).append(' ')
                        .append(coordinate(y(chart.scale().apply(point.value()), axis)));
            }
            svg.append("<path class=\"").append(css).append("\" d=\"").append(path).append("\" fill=\"none\" stroke-width=\"2\"/>");
        }
    }

    private static Instant middle(MetricHistory.Point point, Duration resolution) {
        return point.at().plus(resolution.dividedBy(2));
    }

    private static String description(Chart chart, Axis axis) {
        if (chart.empty()) {
            return "No data in the " + chart.range().words() + ".";
        }
        return "Last value " + chart.lastValues() + "; axis from " + number(axis.minimum(), axis.decimals()) + " to "
                + number(axis.maximum(), axis.decimals()) + unitSuffix(chart.scale()) + ".";
    }

    record Axis(double minimum, double maximum, double step, int decimals) {
        List<Double> ticks() {
            List<Double> ticks = new ArrayList<>();
            for (int index = 0; minimum + index * step <= maximum + step / 1000; index++) {
                ticks.add(minimum + index * step);
            }
            return ticks;
        }
    }

    /** From zero (or below, for negative values) to a round maximum above the largest value, in about four steps. */
    static Axis axis(Chart chart) {
        double largest = 0;
        double smallest = 0;
        for (Line line : chart.lines()) {
            for (MetricHistory.Point point : line.points()) {
                largest = Math.max(largest, chart.scale().apply(point.value()));
                smallest = Math.min(smallest, chart.scale().apply(point.value()));
            }
        }
        if (largest - smallest <= 0) {
            largest = smallest + 1;
        }
        double step = roundStep((largest - smallest) / 4);
        double minimum = Math.floor(smallest / step) * step;
        double maximum = Math.ceil(largest / step) * step;
        int decimals = step >= 1 ? 0 : (int) Math.ceil(-Math.log10(step) - 1e-9) + (roundedToHalf(step) ? 1 : 0);
        return new Axis(minimum, maximum, step, decimals);
    }

    private static boolean roundedToHalf(double step) {
        double scaled = step / Math.pow(10, Math.floor(Math.log10(step)));
        return Math.abs(scaled - 2.5) < 1e-9;
    }

    /** 1, 2, 2.5 or 5 times a power of ten. */
    static double roundStep(double rough) {
        double power = Math.pow(10, Math.floor(Math.log10(rough)));
        for (double multiple : new double[] {1, 2, 2.5, 5, 10}) {
            if (multiple * power >= rough - 1e-12) {
                return multiple * power;
            }
        }
        return 10 * power;
    }

    static double x(Instant at, Instant from, ChartRange range) {
        double fraction = (double) Duration.between(from, at).toMillis() / range.span().toMillis();
        return LEFT + Math.max(0, Math.min(1, fraction)) * PLOT_WIDTH;
    }

    static double y(double value, Axis axis) {
        return TOP + PLOT_HEIGHT - (value - axis.minimum()) / (axis.maximum() - axis.minimum()) * PLOT_HEIGHT;
    }

    static String coordinate(double value) {
        return String.format(Locale.ROOT, "%.1f", value);
    }

    private static String unitSuffix(Scale scale) {
        return scale.unit().isEmpty() ? "" : " " + scale.unit();
    }

    private static int decimalsFor(double value) {
        double magnitude = Math.abs(value);
        return magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
    }

    static String number(double value, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    static String escape(String text) {
        StringBuilder escaped = new StringBuilder(text.length());
        for (char character : text.toCharArray()) {
            switch (character) {
                case '&' -> escaped.append("&amp;");
                case '<' -> escaped.append("&lt;");
                case '>' -> escaped.append("&gt;");
                case '"' -> escaped.append("&quot;");
                case '\'' -> escaped.append("&#39;");
                default -> escaped.append(character);
            }
        }
        return escaped.toString();
    }
}
