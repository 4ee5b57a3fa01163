package io.macfleet.lifecycle;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Keeps a scheduled round of the service (supervision, observation) out of the service's shutdown. A round that
 * started, or was still running, while the service stopped used beans of a container already shut down ("ArC
 * container not initialized" when the demo was stopped). The service's {@code ShutdownEvent} observer calls
 * {@link #stop}: no round starts after it, and the stop waits (bounded) for the one under way, before the container
 * goes. (H2's own JVM shutdown hook may still close an embedded file database under that round: H2 refuses
 * {@code DB_CLOSE_ON_EXIT=FALSE} together with the {@code AUTO_SERVER} the CLI needs.)
 */
public final class ShutdownGate {

    private final Semaphore round = new Semaphore(1);
    private volatile boolean stopping;

    /** True when a round may run now; then {@link #leave()} must follow, in a finally block. */
    public boolean enter() {
        if (stopping) {
            return false;
        }
        round.acquireUninterruptibly();
        if (stopping) {
            round.release();
            return false;
        }
        return true;
    }

    public void leave() {
        round.release();
    }

    /** The service is stopping: what fails now is the shutdown's doing, not worth a warning. */
    public boolean stopping() {
        return stopping;
    }

    /**
     * No round starts from now on; waits up to {@code patience} for the round under way.
     *
     * @return true when no round is under way any more
     */
    public boolean stop(Duration patience) {
        stopping = true;
        try {
            if (round.tryAcquire(patience.toMillis(), TimeUnit.MILLISECONDS)) {
                round.release();
                return true;
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
