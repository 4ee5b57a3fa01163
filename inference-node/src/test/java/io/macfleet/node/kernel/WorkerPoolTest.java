package io.macfleet.node.kernel;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WorkerPoolTest {

    @Test
    void everyIndexRunsExactlyOnceAcrossManyShortJobs() {
        try (WorkerPool pool = new WorkerPool(3)) {
            for (int job = 0; job < 2000; job++) {
                int count = 1 + job % 97;
                AtomicIntegerArray runs = new AtomicIntegerArray(count);
                pool.parallelFor(count, (start, end, worker) -> {
                    assertThat(worker).isBetween(0, 2);
                    for (int i = start; i < end; i++) {
                        runs.incrementAndGet(i);
                    }
                });
                for (int i = 0; i < count; i++) {
                    assertThat(runs.get(i)).as("job %d index %d", job, i).isEqualTo(1);
                }
            }
        }
    }

    @Test
    void aFailureInAnyWorkerReachesTheCallerAndThePoolStaysUsable() {
        try (WorkerPool pool = new WorkerPool(2)) {
            assertThatThrownBy(() -> pool.parallelFor(64, (start, end, worker) -> {
                if (start <= 40 && 40 < end) {
                    throw new ArithmeticException("boom at 40");
                }
            })).isInstanceOf(IllegalStateException.class).hasRootCauseMessage("boom at 40");
            AtomicIntegerArray runs = new AtomicIntegerArray(64);
            pool.parallelFor(64, (start, end, worker) -> {
                for (int i = start; i < end; i++) {
                    runs.incrementAndGet(i);
                }
            });
            for (int i = 0; i < 64; i++) {
                assertThat(runs.get(i)).isEqualTo(1);
            }
        }
    }


    /** Loops far enough apart that every worker has parked between them (spins are 100 us), and back to back. */
    @Test
    void workersThatParkedWakeForTheNextLoop() throws InterruptedException {
        try (WorkerPool pool = new WorkerPool(3)) {
            for (int job = 0; job < 40; job++) {
                if (job % 2 == 0) {
                    Thread.sleep(2);
                }
                java.util.concurrent.ConcurrentHashMap<Integer, Boolean> workers = new java.util.concurrent.ConcurrentHashMap<>();
                AtomicIntegerArray runs = new AtomicIntegerArray(300);
                pool.parallelFor(300, (start, end, worker) -> {
                    workers.put(worker, true);
                    for (int i = start; i < end; i++) {
                        runs.incrementAndGet(i);
                    }
                    try {
                        Thread.sleep(0, 200_000); // slow enough that the parked workers take part
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                for (int i = 0; i < 300; i++) {
                    assertThat(runs.get(i)).as("job %d index %d", job, i).isEqualTo(1);
                }
                assertThat(workers.keySet()).allSatisfy(worker -> assertThat(worker).isBetween(0, 2));
            }
        }
    }

    @Test
    void aClosedPoolRefusesWork() {
        WorkerPool pool = new WorkerPool(2);
        pool.close();
        assertThatThrownBy(() -> pool.parallelFor(10, (start, end, worker) -> { }))
                .isInstanceOf(IllegalStateException.class);
    }
}
