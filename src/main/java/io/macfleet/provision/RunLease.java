package io.macfleet.provision;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The lease this process holds on a run while it works on it: a heartbeat every quarter of the lease timeout; when a
 * beat finds the lease taken by another process, this one stops writing to the run.
 */
final class RunLease {

    private final ProvisioningStore store;
    private final long runId;
    private final String owner;
    private final Duration timeout;
    private final Clock clock;
    private final AtomicBoolean lost = new AtomicBoolean();
    private Thread beating;

    RunLease(ProvisioningStore store, long runId, String owner, Duration timeout, Clock clock) {
        this.store = store;
        this.runId = runId;
        this.owner = owner;
        this.timeout = timeout;
        this.clock = clock;
    }

    RunLease start() {
        beating = Thread.ofVirtual().name("provision-lease-" + runId).start(this::heartbeat);
        return this;
    }

    void stop() {
        beating.interrupt();
    }

    /** Another process took the run over: this one must not write to it any more. */
    boolean lost() {
        return lost.get();
    }

    void release() {
        store.release(runId, owner);
    }

    private void heartbeat() {
        Duration every = timeout.dividedBy(4);
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(every);
            } catch (InterruptedException e) {
                return;
            }
            try {
                if (!store.heartbeat(runId, owner, clock.instant())) {
                    lost.set(true);
                    return;
                }
            } catch (RuntimeException e) {
                // A database hiccup: try again at the next beat; the lease only goes stale after several misses.
            }
        }
    }
}
