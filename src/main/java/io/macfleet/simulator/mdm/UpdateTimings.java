package io.macfleet.simulator.mdm;

import java.time.Duration;

/**
 * How long a simulated Mac's update phases take. Real Macs take tens of minutes to download and install and enforce a
 * missed deadline one hour after starting again (Apple's softwareupdate.enforcement.specific notes); tests scale all
 * of it down.
 *
 * @param tick                how often the MDM client looks at its state (its check-in period)
 * @param download            downloading → prepared
 * @param install             installing → restart
 * @param enforceAfterRestart a Mac that was off at the deadline enforces this long after it starts again (real: 1 h)
 */
public record UpdateTimings(Duration tick, Duration download, Duration install, Duration enforceAfterRestart) {

    public static UpdateTimings realistic() {
        return new UpdateTimings(Duration.ofSeconds(1), Duration.ofMinutes(2), Duration.ofMinutes(3), Duration.ofHours(1));
    }

    /** Fast enough for tests, slow enough that each phase is observable. */
    public static UpdateTimings forTests() {
        return new UpdateTimings(Duration.ofMillis(10), Duration.ofMillis(150), Duration.ofMillis(150), Duration.ofMillis(300));
    }
}
