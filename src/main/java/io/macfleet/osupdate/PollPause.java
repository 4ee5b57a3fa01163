package io.macfleet.osupdate;

import java.time.Duration;

/**
 * How the engine waits between two looks at the Macs. The product sleeps; a test advances its clock instead, so that a
 * deadline passes without waiting for it.
 */
@FunctionalInterface
interface PollPause {
    PollPause SLEEP = duration -> {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while watching the update", e);
        }
    };

    void pause(Duration duration);
}
