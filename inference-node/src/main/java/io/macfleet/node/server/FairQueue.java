package io.macfleet.node.server;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admits one generation at a time in arrival order (a fair semaphore); at most {@code limit} more may wait,
 * later arrivals are refused so the server can answer 429 at once instead of piling up.
 */
final class FairQueue {
    private final Semaphore running = new Semaphore(1, true);
    private final AtomicInteger admitted = new AtomicInteger();
    private final int limit;

    FairQueue(int limit) {
        this.limit = limit;
    }

    /** False when the queue is full; otherwise waits for its turn (caller must {@link #leave()}). */
    boolean enter() throws InterruptedException {
        if (admitted.incrementAndGet() > limit + 1) {
            admitted.decrementAndGet();
            return false;
        }
        try {
            running.acquire();
            return true;
        } catch (InterruptedException e) {
            admitted.decrementAndGet();
            throw e;
        }
    }

    void leave() {
        running.release();
        admitted.decrementAndGet();
    }

    int inFlight() {
        return admitted.get();
    }

    /** Requests admitted but not yet generating (one generates at a time). */
    int waiting() {
        return Math.max(0, admitted.get() - (running.availablePermits() == 0 ? 1 : 0));
    }
}
