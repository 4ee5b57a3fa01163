package io.macfleet.node.kernel;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed pool of platform threads that splits index ranges (matrix rows, heads) across cores. Work is claimed in
 * chunks from a shared counter rather than pre-assigned, so a core slowed by other processes does less of it.
 * <p>
 * Hand-offs spin briefly before parking: an idle worker polls for the next loop for up to {@link #SPIN_NANOS}
 * before it parks, and the caller polls for the workers' end of a loop as long before it parks. A decode step runs
 * about 80 parallel loops with microseconds of serial work between them; when a worker (or the caller) parks
 * between two of them, its core goes idle, and on a virtual machine waking an idle core costs tens of microseconds
 * (measured: about 80 us of idle time per loop and thread, 9% of a token). The spin is bounded, so on a shared
 * machine a thread waiting for a preempted one gives its core back after at most that long (an unbounded spin,
 * tried before, cost 30-270 us per loop under load).
 */
public final class WorkerPool implements AutoCloseable {
    /** A piece of a parallel loop: indices [start, end), run by worker {@code worker} (0 ≤ worker < size). */
    @FunctionalInterface
    public interface RangeTask {
        void run(int start, int end, int worker);
    }

    /** How long an idle thread polls before parking. */
    static final long SPIN_NANOS = Long.getLong("inference.spinMicros", 100) * 1000;

    /** One parallel loop. */
    private static final class Job {
        final RangeTask task;
        final int count, chunk;
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger pending;
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        Job(RangeTask task, int count, int chunk, int workers) {
            this.task = task;
            this.count = count;
            this.chunk = chunk;
            this.pending = new AtomicInteger(workers);
        }
    }

    private final int size;
    private final Thread[] workers;
    private volatile Job job;
    /** Incremented for every new job; workers run each generation once. */
    private volatile long generation;
    private volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicIntegerArray parked;
    private volatile Thread caller;
    private volatile boolean callerParked;

    public WorkerPool(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("worker count must be at least 1, got " + size);
        }
        this.size = size;
        this.workers = new Thread[size - 1];
        this.parked = new java.util.concurrent.atomic.AtomicIntegerArray(Math.max(1, size - 1));
        for (int i = 0; i < size - 1; i++) {
            int id = i + 1;
            Thread thread = new Thread(() -> work(id), "inference-worker-" + id);
            thread.setDaemon(true);
            workers[i] = thread;
            thread.start();
        }
    }

    /**
     * Whether the products run on this pool round their activations as llama.cpp does ({@link ActivationRounding}).
     * The architecture decides when it loads (deepseek2 does, to give llama.cpp's greedy tokens); the pool carries it
     * because every product of one model goes through the model's pool, and the llama-family models, whose tests
     * compare with float references, keep float activations.
     */
    private volatile boolean roundsActivations;

    public void roundActivations(boolean round) {
        roundsActivations = round;
    }

    public boolean roundsActivations() {
        return roundsActivations;
    }

    public int size() {
        return size;
    }

    public synchronized void parallelFor(int count, RangeTask task) {
        if (size == 1 || count < 2) {
            task.run(0, count, 0);
            return;
        }
        if (closed) {
            throw new IllegalStateException("worker pool closed");
        }
        Job current = new Job(task, count, Math.max(1, count / (size * 4)), size - 1);
        caller = Thread.currentThread();
        job = current;
        generation++; // volatile write after the job: a worker that sees the new generation sees the job
        for (int i = 0; i < workers.length; i++) {
            if (parked.get(i) != 0) {
                LockSupport.unpark(workers[i]);
            }
        }
        try {
            drain(current, 0);
        } catch (Throwable t) {
            // Still wait for the workers: returning while they run the task would let them overlap the next one.
            current.failure.compareAndSet(null, t);
        }
        awaitWorkers(current);
        if (current.failure.get() != null) {
            throw new IllegalStateException("worker failed", current.failure.get());
        }
    }

    private void awaitWorkers(Job current) {
        long deadline = System.nanoTime() + SPIN_NANOS;
        for (int spins = 0; current.pending.get() != 0; spins++) {
            if ((spins & 63) == 0 && System.nanoTime() > deadline) {
                callerParked = true;
                while (current.pending.get() != 0) {
                    LockSupport.park(this);
                }
                callerParked = false;
                return;
            }
            Thread.onSpinWait();
        }
    }

    private static void drain(Job job, int worker) {
        for (int start; (start = job.next.getAndAdd(job.chunk)) < job.count; ) {
            job.task.run(start, Math.min(job.count, start + job.chunk), worker);
        }
    }

    private void work(int id) {
        long seen = 0;
        while (true) {
            long deadline = System.nanoTime() + SPIN_NANOS;
            int spins = 0;
            while (generation == seen && !closed) {
                if ((++spins & 63) == 0 && System.nanoTime() > deadline) {
                    parked.set(id - 1, 1);
                    // Re-check after announcing: the caller reads `parked` after writing `generation`.
                    while (generation == seen && !closed) {
                        LockSupport.park(this);
                    }
                    parked.set(id - 1, 0);
                    break;
                }
                Thread.onSpinWait();
            }
            if (closed) {
                return;
            }
            seen = generation;
            Job current = job;
            try {
                drain(current, id);
            } catch (Throwable t) {
                current.failure.compareAndSet(null, t);
            } finally {
                if (current.pending.decrementAndGet() == 0 && callerParked) {
                    LockSupport.unpark(caller);
                }
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
