package io.macfleet.simulator;

/** The speed a Thunderbolt cable links at, with the text system_profiler prints for it. */
public enum LinkSpeed {
    TB5("80 Gb/s"), TB4("40 Gb/s");

    private final String systemProfilerText;

    LinkSpeed(String systemProfilerText) {
        this.systemProfilerText = systemProfilerText;
    }

    public String systemProfilerText() {
        return systemProfilerText;
    }
}
