package io.macfleet.facts;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Thunderbolt port's speed as system_profiler reports it: "80 Gb/s" for a negotiated link, or
 * "Up to 120 Gb/s" for what an empty port could do.
 *
 * @param gigabitsPerSecond the number in the text
 * @param upTo whether the text was a capability ("Up to ...") rather than a negotiated link speed
 */
public record LinkSpeed(double gigabitsPerSecond, boolean upTo) {

    private static final Pattern SPEED = Pattern.compile("(?i)^\\s*(up to\\s+)?([0-9]+(?:\\.[0-9]+)?)\\s*Gb/s\\s*$");

    /** Thunderbolt 5 links at 80 Gb/s (120 Gb/s with boost); Thunderbolt 4 and USB4 v1 at 40 Gb/s or less. */
    public static final double THUNDERBOLT_5_GBPS = 80;

    public static Optional<LinkSpeed> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        Matcher matcher = SPEED.matcher(text);
        if (!matcher.matches()) {
            return Optional.empty();
        }
        return Optional.of(new LinkSpeed(Double.parseDouble(matcher.group(2)), matcher.group(1) != null));
    }

    public boolean isThunderbolt5() {
        return gigabitsPerSecond >= THUNDERBOLT_5_GBPS;
    }

    @Override
    public String toString() {
        String number = gigabitsPerSecond == Math.rint(gigabitsPerSecond)
                ? Long.toString((long) gigabitsPerSecond)
                : Double.toString(gigabitsPerSecond);
        return (upTo ? "Up to " : "") + number + " Gb/s";
    }
}
