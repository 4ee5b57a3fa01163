package io.macfleet.simulator;

import java.util.List;

/**
 * A macOS release as the simulated Macs report it. Version/build pairs and kernel strings come from real
 * outputs (see src/test/resources/macos-samples/SOURCES.md); the kernel timestamp of 26.1 is from a
 * different Apple chip's build of the same kernel and is marked composed there.
 */
public record MacosRelease(String version, String build, String darwinVersion, String kernelBuildDate, String xnu) {

    public static final List<MacosRelease> KNOWN = List.of(
            new MacosRelease("26.1", "25B78", "25.1.0", "Mon Oct 20 19:34:05 PDT 2025", "xnu-12377.41.6~2"),
            new MacosRelease("26.2", "25C56", "25.2.0", "Tue Nov 18 21:09:55 PST 2025", "xnu-12377.61.12~1"),
            new MacosRelease("26.3", "25D125", "25.3.0", "Wed Jan 28 20:47:03 PST 2026", "xnu-12377.81.4~5"));

    public static MacosRelease of(String version) {
        return KNOWN.stream().filter(r -> r.version.equals(version)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown macOS version '" + version + "'; the simulator knows "
                        + KNOWN.stream().map(MacosRelease::version).toList()));
    }

    /** The release after this one, if the simulator knows it (what softwareupdate offers). */
    public static java.util.Optional<MacosRelease> after(MacosRelease release) {
        int index = KNOWN.indexOf(release);
        return index >= 0 && index + 1 < KNOWN.size() ? java.util.Optional.of(KNOWN.get(index + 1)) : java.util.Optional.empty();
    }

    public int compareVersion(MacosRelease other) {
        return Integer.compare(KNOWN.indexOf(this), KNOWN.indexOf(other));
    }
}
