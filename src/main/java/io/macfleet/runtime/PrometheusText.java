package io.macfleet.runtime;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.Predicate;

/**
 * Samples of the Prometheus text exposition format (version 0.0.4), as inference servers print it on /metrics: one
 * sample per line, {@code name{label="value",...} number [timestamp]}, comments and blank lines skipped. A line that
 * does not parse is skipped rather than failing the whole scrape (one odd series must not hide the others).
 * Format: https://prometheus.io/docs/instrumenting/exposition_formats/
 */
public record PrometheusText(List<Sample> samples) {

    /** One sample: the metric name as printed (llama.cpp's contain a colon), its labels and its value. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public Sample {
            labels = Map.copyOf(labels);
        }
    }

    public PrometheusText {
        samples = List.copyOf(samples);
    }

    public static PrometheusText parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                samples.add(sample(line));
            } catch (RuntimeException unreadable) {
                // skipped: see the class comment
            }
        }
        return new PrometheusText(samples);
    }

    private static Sample sample(String line) {
        int brace = line.indexOf('{');
        int space = line.indexOf(' ');
        Map<String, String> labels = new LinkedHashMap<>();
        String name;
        String rest;
        if (brace >= 0 && (space < 0 || brace < space)) {
            name = line.substring(0, brace);
            int index = brace + 1;
            while (line.charAt(index) != '}') {
                int equals = line.indexOf('=', index);
                String label = line.substring(index, equals).strip();
                StringBuilder value = new StringBuilder();
                int at = equals + 2; // past ="
                while (line.charAt(at) != '"') {
                    char c = line.charAt(at);
                    if (c == '\\') {
                        char next = line.charAt(++at);
                        value.append(next == 'n' ? '\n' : next);
                    } else {
                        value.append(c);
                    }
                    at++;
                }
                labels.put(label, value.toString());
                index = at + 1;
                if (line.charAt(index) == ',') {
                    index++;
                }
            }
            rest = line.substring(index + 1).strip();
        } else {
            name = line.substring(0, space);
            rest = line.substring(space + 1).strip();
        }
        String number = rest.split("\\s+")[0];
        double value = switch (number) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(number);
        };
        return new Sample(name, labels, value);
    }

    /** The value of the first sample of this name (any labels), or empty. */
    public OptionalDouble value(String name) {
        return samples.stream().filter(sample -> sample.name().equals(name)).mapToDouble(Sample::value).findFirst();
    }

    /** Every sample of this name whose labels match. */
    public List<Sample> all(String name, Predicate<Map<String, String>> labels) {
        return samples.stream().filter(sample -> sample.name().equals(name) && labels.test(sample.labels())).toList();
    }
}
