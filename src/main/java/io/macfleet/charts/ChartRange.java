package io.macfleet.charts;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/** The spans a chart shows, each with the resolution its history keeps. */
public enum ChartRange {
    HOUR(Duration.ofHours(1), Duration.ofSeconds(15), Duration.ofMinutes(15), "last hour"),
    DAY(Duration.ofDays(1), Duration.ofMinutes(5), Duration.ofHours(4), "last day");

    private final Duration span;
    private final Duration resolution;
    private final Duration labelEvery;
    private final String words;

    ChartRange(Duration span, Duration resolution, Duration labelEvery, String words) {
        this.span = span;
        this.resolution = resolution;
        this.labelEvery = labelEvery;
        this.words = words;
    }

    public Duration span() {
        return span;
    }

    /** The width of one slot of the history: samples within it are averaged. */
    public Duration resolution() {
        return resolution;
    }

    /** How far apart the time axis labels are. */
    public Duration labelEvery() {
        return labelEvery;
    }

    public int slots() {
        return (int) (span.toSeconds() / resolution.toSeconds());
    }

    /** "last hour", "last day". */
    public String words() {
        return words;
    }

    /** What a URL says: "hour", "day". */
    public String parameter() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Optional<ChartRange> parse(String text) {
        if (text == null || text.isBlank()) {
            return Optional.of(HOUR);
        }
        for (ChartRange range : values()) {
            if (range.parameter().equals(text.strip().toLowerCase(Locale.ROOT))) {
                return Optional.of(range);
            }
        }
        return Optional.empty();
    }
}
