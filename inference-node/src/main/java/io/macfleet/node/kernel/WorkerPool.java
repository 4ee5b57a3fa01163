package io.macfleet.node.kernel;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A fixed pool of platform threads that splits index ranges (matrix rows, heads) across cores. Work is claimed in
 * chunks from a shared counter rather than pre-assigned, so a core slowed by other processes does less of it.
 */
public final class WorkerPool implements AutoCloseable {
    /** A piece of a parallel loop: indices [start, end), run by worker {@code worker} (0 ≤ worker < size). */
    @FunctionalInterface
    public interface RangeTask {
        void run(int start, int end, int worker);
    }

    private final int size;
    private final ExecutorService executor;

    public WorkerPool(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("worker count must be at least 1, got " + size);
        }
        this.size = size;
        this.executor = size == 1 ? null : Executors.newFixedThreadPool(size - 1, runnable -> {
            Thread thread = new Thread(runnable, "inference-worker");
            thread.setDaemon(true);
            return thread;
        });
    }

    public int size() {
        return size;
    }

    public void parallelFor(int count, RangeTask task) {
        if (size == 1 || count < 2) {
            task.run(0, count, 0);
            return;
        }
        int chunk = Math.max(1, count / (size * 4));
        AtomicInteger next = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(size - 1);
        for (int worker = 1; worker < size; worker++) {
            int id = worker;
            executor.execute(() -> {
                try {
                    drain(count, chunk, next, task, id);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    done.countDown();
                }
            });
        }
        try {
            drain(count, chunk, next, task, 0);
        } catch (Throwable t) {
            // Still wait for the workers: returning while they run the task would let them overlap the next one.
            failure.compareAndSet(null, t);
        }
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for workers", e);
        }
        if (failure.get() != null) {
            throw new IllegalStateException("worker failed", failure.get());
        }
    }

    private static void drain(int count, int chunk, AtomicInteger next, RangeTask task, int worker) {
        for (int start; (start = next.getAndAdd(chunk)) < count; ) {
            task.run(start, Math.min(count, start + chunk), worker);
        }
    }

    @Override
    public void close() {
        if (executor != null) {
            executor.shutdownNow();
        }
    }
}
