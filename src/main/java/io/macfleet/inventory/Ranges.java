package io.macfleet.inventory;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Range expansion of machine names and addresses: {@code studio-[01-04]} is studio-01 to studio-04 (the
 * start's zero padding is kept), {@code 192.168.50.[11-14]} expands alongside.
 */
final class Ranges {

    static final int MAXIMUM_SIZE = 1000;
    private static final Pattern RANGE = Pattern.compile("^(.*?)\\[(\\d+)-(\\d+)](.*)$");

    record Range(String prefix, String startText, long start, long end, String suffix) {
        int size() {
            return (int) (end - start + 1);
        }

        List<String> expand() {
            int width = startText.length() > 1 && startText.startsWith("0") ? startText.length() : 0;
            List<String> values = new ArrayList<>(size());
            for (long value = start; value <= end; value++) {
                String number = Long.toString(value);
                values.add(prefix + "0".repeat(Math.max(0, width - number.length())) + number + suffix);
            }
            return values;
        }
    }

    private Ranges() {
    }

    /** The range in the text, or null when the text holds none. */
    static Range parse(String text) {
        Matcher matcher = RANGE.matcher(text);
        if (!matcher.matches() || matcher.group(2).length() > 9 || matcher.group(3).length() > 9) {
            return null;
        }
        return new Range(matcher.group(1), matcher.group(2), Long.parseLong(matcher.group(2)),
                Long.parseLong(matcher.group(3)), matcher.group(4));
    }
}
