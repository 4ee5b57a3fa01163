package io.macfleet.charts;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The recent values of the charted metrics, in memory: per series one ring of slots per {@link ChartRange} (the last
 * hour in 15 s slots, the last day in 5 min slots), each slot the mean of the samples that fell into it. Memory is
 * bounded: at most {@code maximumSeries} series (a new one beyond that is not kept), and a series that got no sample
 * for a day is forgotten. The history starts empty with every service start; Prometheus keeps the long history.
 */
public final class MetricHistory {

    /** A series: one metric about one cluster or machine. */
    public record Key(String metric, String subject) {
    }

    /** One slot's mean value, at the slot's start. */
    public record Point(Instant at, double value) {
    }

    private final int maximumSeries;
    private final Map<Key, Series> series = new LinkedHashMap<>();
    private boolean refusedSome;

    public MetricHistory(int maximumSeries) {
        this.maximumSeries = maximumSeries;
    }

    /** Adds a sample; NaN and infinite values are not data and leave a gap. */
    public synchronized void record(Key key, Instant at, double value) {
        if (!Double.isFinite(value)) {
            return;
        }
        Series existing = series.get(key);
        if (existing == null) {
            forgetOlderThanADay(at);
            if (series.size() >= maximumSeries) {
                refusedSome = true;
                return;
            }
            existing = new Series();
            series.put(key, existing);
        }
        existing.record(at, value);
    }

    /** The slots of the range ending at {@code now} that have data, oldest first. */
    public synchronized List<Point> points(Key key, ChartRange range, Instant now) {
        Series found = series.get(key);
        return found == null ? List.of() : found.rings.get(range).points(now);
    }

    public synchronized int seriesCount() {
        return series.size();
    }

    /** True once a new series was not kept because {@code maximumSeries} were already kept. */
    public synchronized boolean refusedSome() {
        return refusedSome;
    }

    private void forgetOlderThanADay(Instant now) {
        Instant dayAgo = now.minus(ChartRange.DAY.span());
        for (Iterator<Series> iterator = series.values().iterator(); iterator.hasNext(); ) {
            if (iterator.next().last.isBefore(dayAgo)) {
                iterator.remove();
            }
        }
    }

    private static final class Series {
        final Map<ChartRange, Ring> rings = new EnumMap<>(ChartRange.class);
        Instant last = Instant.EPOCH;

        Series() {
            for (ChartRange range : ChartRange.values()) {
                rings.put(range, new Ring(range));
            }
        }

        void record(Instant at, double value) {
            rings.values().forEach(ring -> ring.record(at, value));
            if (at.isAfter(last)) {
                last = at;
            }
        }
    }

    /** Fixed arrays indexed by slot number modulo their length: a slot whose number is not the stored one is empty. */
    private static final class Ring {
        final long resolutionSeconds;
        final long[] slot;
        final double[] sum;
        final int[] count;

        Ring(ChartRange range) {
            resolutionSeconds = range.resolution().toSeconds();
            int slots = range.slots();
            slot = new long[slots];
            sum = new double[slots];
            count = new int[slots];
            java.util.Arrays.fill(slot, Long.MIN_VALUE);
        }

        void record(Instant at, double value) {
            long number = Math.floorDiv(at.getEpochSecond(), resolutionSeconds);
            int index = (int) Math.floorMod(number, (long) slot.length);
            if (slot[index] != number) {
                if (slot[index] > number) {
                    return; // older than what the ring keeps
                }
                slot[index] = number;
                sum[index] = 0;
                count[index] = 0;
            }
            sum[index] += value;
            count[index]++;
        }

        List<Point> points(Instant now) {
            long newest = Math.floorDiv(now.getEpochSecond(), resolutionSeconds);
            long oldest = newest - slot.length + 1;
            List<Point> points = new ArrayList<>();
            for (long number = oldest; number <= newest; number++) {
                int index = (int) Math.floorMod(number, (long) slot.length);
                if (slot[index] == number && count[index] > 0) {
                    points.add(new Point(Instant.ofEpochSecond(number * resolutionSeconds), sum[index] / count[index]));
                }
            }
            return points;
        }
    }
}
