package io.macfleet.inventory;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** macOS version strings as Apple writes them: 26, 26.2, 26.2.1 (major 11 to 99, no leading zeros). */
public final class MacosVersion {

    private static final Pattern VERSION = Pattern.compile("^([1-9][0-9])(\\.(0|[1-9][0-9]*)){0,2}$");

    private MacosVersion() {
    }

    public static boolean isValid(String text) {
        if (text == null) {
            return false;
        }
        Matcher matcher = VERSION.matcher(text);
        return matcher.matches() && Integer.parseInt(matcher.group(1)) >= 11;
    }
}
