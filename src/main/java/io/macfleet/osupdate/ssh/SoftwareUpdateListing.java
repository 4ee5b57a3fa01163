package io.macfleet.osupdate.ssh;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code softwareupdate --list} as macOS 10.15 and later print it: a {@code * Label: LABEL} line followed by a tab-indented
 * {@code Title: T, Version: V, Size: NKiB, Recommended: YES, Action: restart,} line per update (trailing space or not),
 * and "No new software available." (on standard error) when there is nothing. Real captures are in
 * {@code src/test/resources/macos-samples/softwareupdate/} with their sources.
 */
public final class SoftwareUpdateListing {
    private static final Pattern LABEL = Pattern.compile("^\\s*[*-]\\s*Label:\\s*(.+?)\\s*$");
    private static final Pattern FIELD = Pattern.compile("(Title|Version|Size|Recommended|Action):\\s*([^,]*)");
    /** The label ends in "-BUILD" for macOS updates: "macOS Tahoe 26.2-25C56", "macOS 27-26A428". */
    private static final Pattern BUILD_SUFFIX = Pattern.compile("-(\\d{2}[A-Z]\\d{1,5}[a-z]?)$");

    private SoftwareUpdateListing() {
    }

    /**
     * One update Software Update offers.
     *
     * @param label what {@code softwareupdate --install} takes, exactly as listed
     * @param version the Version field ("26.2", "27", "26.3.1 (a)")
     * @param build the build at the end of a macOS label, when there is one
     * @param sizeKib the Size field in KiB, or -1 when absent
     */
    public record OfferedUpdate(String label, String title, String version, Optional<String> build, long sizeKib,
                                boolean recommended, boolean restart) {

        /** A macOS update or upgrade (not Safari, Command Line Tools or the like). */
        public boolean macos() {
            return title.startsWith("macOS");
        }
    }

    /**
     * Every update listed. Nothing listed is an empty list only when the output says so ("No new software
     * available."), so an output macOS has not printed before is never read as "up to date".
     *
     * @param stdout the command's standard output
     * @param stderr its standard error (where "No new software available." goes)
     * @throws IllegalArgumentException naming the line that could not be read
     */
    public static List<OfferedUpdate> parse(String stdout, String stderr) {
        List<OfferedUpdate> updates = new ArrayList<>();
        List<String> lines = stdout.lines().toList();
        for (int index = 0; index < lines.size(); index++) {
            Matcher label = LABEL.matcher(lines.get(index));
            if (!label.matches()) {
                continue;
            }
            String detail = index + 1 < lines.size() ? lines.get(index + 1) : "";
            if (!detail.strip().startsWith("Title:")) {
                throw new IllegalArgumentException("softwareupdate --list: line " + (index + 2) + ": expected the 'Title: …, Version: …' line of '"
                        + label.group(1) + "', got '" + abbreviate(detail.strip()) + "'");
            }
            updates.add(update(label.group(1), detail, index + 2));
            index++;
        }
        if (updates.isEmpty() && !(stdout + "\n" + stderr).contains("No new software available")) {
            throw new IllegalArgumentException("softwareupdate --list: neither an update ('* Label: …') nor 'No new software available.' in its output: '"
                    + abbreviate((stdout + " " + stderr).strip().replace('\n', ' ')) + "'");
        }
        return updates;
    }

    private static OfferedUpdate update(String label, String detail, int line) {
        String title = null;
        String version = null;
        long size = -1;
        boolean recommended = false;
        boolean restart = false;
        Matcher field = FIELD.matcher(detail);
        while (field.find()) {
            String value = field.group(2).strip();
            switch (field.group(1)) {
                case "Title" -> title = value;
                case "Version" -> version = value;
                case "Size" -> size = kibibytes(value);
                case "Recommended" -> recommended = value.equalsIgnoreCase("YES");
                case "Action" -> restart = value.toLowerCase(Locale.ROOT).contains("restart");
                default -> throw new IllegalStateException(field.group(1));
            }
        }
        if (title == null || version == null) {
            throw new IllegalArgumentException("softwareupdate --list: line " + line + ": no Title or Version field for '" + label + "'");
        }
        Matcher build = BUILD_SUFFIX.matcher(label);
        return new OfferedUpdate(label, title, version, build.find() ? Optional.of(build.group(1)) : Optional.empty(), size, recommended, restart);
    }

    /** "7381934KiB" (10.15+), "1292240K" (older). */
    private static long kibibytes(String value) {
        Matcher number = Pattern.compile("^(\\d+)\\s*(KiB|K)?$").matcher(value);
        return number.matches() ? Long.parseLong(number.group(1)) : -1;
    }

    private static String abbreviate(String text) {
        return text.length() <= 120 ? text : text.substring(0, 120) + "...";
    }
}
