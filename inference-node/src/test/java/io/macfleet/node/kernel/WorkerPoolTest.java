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
    void parkedWorkersWakeForTheNextJob() throws InterruptedException {
        try (WorkerPool pool = new WorkerPool(2)) {
            AtomicIntegerArray workers = new AtomicIntegerArray(2);
            for (int round = 0; round < 3; round++) {
                Thread.sleep(WorkerPool.SPIN_NANOS / 1_000_000 + 20); // long enough for the worker to park
                pool.parallelFor(1000, (start, end, worker) -> {
                    workers.incrementAndGet(worker);
                    try {
                        Thread.sleep(1); // slow chunks: the caller alone cannot take them all before the worker wakes
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            assertThat(workers.get(1)).as("chunks run by the parked-then-woken worker").isPositive();
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

    @Test
    void nestedUseRunsInlineInsteadOfDeadlocking() {
        try (WorkerPool pool = new WorkerPool(2)) {
            AtomicIntegerArray runs = new AtomicIntegerArray(16 * 8);
            pool.parallelFor(16, (start, end, worker) -> {
                for (int outer = start; outer < end; outer++) {
                    int base = outer * 8;
                    pool.parallelFor(8, (s, e, w) -> {
                        for (int i = s; i < e; i++) {
                            runs.incrementAndGet(base + i);
                        }
                    });
                }
            });
            for (int i = 0; i < runs.length(); i++) {
                assertThat(runs.get(i)).isEqualTo(1);
            }
        }
    }

    @Test
    void closedPoolRefusesWork() {
        WorkerPool pool = new WorkerPool(2);
        pool.close();
        assertThatThrownBy(() -> pool.parallelFor(10, (start, end, worker) -> { }))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }
}
