package io.macfleet.node.kernel;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fixed pool of platform threads that splits index ranges (matrix rows, heads) across cores. Work is claimed in
 * chunks from a shared counter rather than pre-assigned, so a core slowed by other processes does less of it.
 * <p>
 * Decode runs over a hundred short products per token, so handing work over must cost microseconds, not the tens
 * of microseconds of waking a parked thread through an executor queue (measured about 50 µs per product with the
 * earlier executor-and-latch version). Idle workers therefore spin for a short while ({@link #SPIN_NANOS}) on the
 * published job before parking, and the caller spins (yielding now and then) until the workers are done, as
 * llama.cpp's threads do. A pool that has been idle for longer than the spin time costs no CPU.
 */
public final class WorkerPool implements AutoCloseable {
    /** A piece of a parallel loop: indices [start, end), run by worker {@code worker} (0 ≤ worker < size). */
    @FunctionalInterface
    public interface RangeTask {
        void run(int start, int end, int worker);
    }

    /** How long an idle worker waits actively for the next job before parking: longer than the gaps in decode. */
    static final long SPIN_NANOS = 200_000;

    private static final class Job {
        final RangeTask task;
        final int count;
        final int chunk;
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger pending;
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        Job(RangeTask task, int count, int chunk, int workers) {
            this.task = task;
            this.count = count;
            this.chunk = chunk;
            this.pending = new AtomicInteger(workers);
        }

        void drain(int worker) {
            for (int start; (start = next.getAndAdd(chunk)) < count; ) {
                task.run(start, Math.min(count, start + chunk), worker);
            }
        }
    }

    private final int size;
    private final Thread[] workers;
    private final ReentrantLock submit = new ReentrantLock();
    private volatile Job job;
    private volatile boolean closed;

    public WorkerPool(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("worker count must be at least 1, got " + size);
        }
        this.size = size;
        this.workers = new Thread[size - 1];
        for (int i = 0; i < workers.length; i++) {
            int id = i + 1;
            workers[i] = Thread.ofPlatform().name("inference-worker-" + id).daemon().unstarted(() -> work(id));
            workers[i].start();
        }
    }

    public int size() {
        return size;
    }

    public void parallelFor(int count, RangeTask task) {
        if (size == 1 || count < 2 || submit.isHeldByCurrentThread() || isWorker(Thread.currentThread())) {
            task.run(0, count, 0); // nested use runs inline rather than deadlock on the single published job
            return;
        }
        if (closed) {
            throw new IllegalStateException("worker pool is closed");
        }
        // One job at a time: the workers follow a single published job.
        submit.lock();
        try {
            Job current = new Job(task, count, Math.max(1, count / (size * 4)), size - 1);
            job = current;
            for (Thread worker : workers) {
                LockSupport.unpark(worker);
            }
            try {
                current.drain(0);
            } catch (Throwable t) {
                current.failure.compareAndSet(null, t);
            }
            for (int spins = 0; current.pending.get() > 0; spins++) {
                if (closed) {
                    throw new IllegalStateException("worker pool closed while a job was running");
                }
                if ((spins & 1023) == 1023) {
                    Thread.yield(); // a worker preempted by another process needs the core more than we do
                } else {
                    Thread.onSpinWait();
                }
            }
            if (current.failure.get() != null) {
                throw new IllegalStateException("worker failed", current.failure.get());
            }
        } finally {
            submit.unlock();
        }
    }

    private boolean isWorker(Thread thread) {
        for (Thread worker : workers) {
            if (worker == thread) {
                return true;
            }
        }
        return false;
    }

    private void work(int id) {
        Job seen = null;
        while (true) {
            Job current;
            long idleSince = System.nanoTime();
            int spins = 0;
            while ((current = job) == seen) {
                if (closed) {
                    return;
                }
                if ((++spins & 63) != 0 || System.nanoTime() - idleSince < SPIN_NANOS) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.park(this); // unparked by the next job (a permit given before parking is kept)
                }
            }
            seen = current;
            try {
                current.drain(id);
            } catch (Throwable t) {
                current.failure.compareAndSet(null, t);
            } finally {
                current.pending.decrementAndGet();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Thread worker : workers) {
            LockSupport.unpark(worker);
        }
    }
}
