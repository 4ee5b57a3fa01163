package io.macfleet.simulator.mdm;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for the simulated devices, which move on their own clock. */
final class MdmTestSupport {
    private MdmTestSupport() {
    }

    static void await(String what, Duration timeout, BooleanSupplier condition) {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < end) {
            if (condition.getAsBoolean()) {
                return;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what);
            }
        }
        throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
