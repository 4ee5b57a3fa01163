package io.macfleet.console;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Times as ops staff read them: "4 min ago" next to an exact UTC time. */
public final class Ages {

    private static final DateTimeFormatter UTC = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);

    private Ages() {
    }

    public static String ago(Instant then, Instant now) {
        Duration age = Duration.between(then, now);
        if (age.isNegative()) {
            // Clocks of the machine that stored the facts and of the service may differ by a little.
            return "just now";
        }
        long seconds = age.toSeconds();
        if (seconds < 60) {
            return seconds + " s ago";
        }
        if (seconds < 3600) {
            return seconds / 60 + " min ago";
        }
        if (seconds < 48 * 3600) {
            return seconds / 3600 + " h ago";
        }
        return seconds / 86400 + " days ago";
    }

    public static String utc(Instant instant) {
        return UTC.format(instant);
    }
}
