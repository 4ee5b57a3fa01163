package io.macfleet.simulator;

import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Small helpers shared by the simulator tests. */
final class TestSupport {
    // Held so the level settings are not garbage-collected with the loggers.
    private static final List<Logger> QUIET = List.of(Logger.getLogger("net.schmizz"), Logger.getLogger("org.apache.sshd"),
            Logger.getLogger("com.hierynomus"));

    private TestSupport() {
    }

    static void quietSshLogs() {
        QUIET.forEach(logger -> logger.setLevel(Level.WARNING));
    }

    static boolean await(Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(50);
        }
        return condition.getAsBoolean();
    }
}
