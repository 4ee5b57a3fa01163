package io.macfleet.node.server;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class FairQueueTest {
    @Test
    void admitsInArrivalOrderAndRefusesBeyondTheLimit() throws Exception {
        FairQueue queue = new FairQueue(2);
        assertThat(queue.enter()).isTrue(); // running
        List<Integer> order = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(2);
        for (int i = 1; i <= 2; i++) {
            int id = i;
            Thread.ofVirtual().start(() -> {
                try {
                    if (queue.enter()) {
                        order.add(id);
                        queue.leave();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            });
            while (queue.inFlight() < i + 1) {
                Thread.sleep(1);
            }
        }
        assertThat(queue.enter()).as("a fourth request exceeds 1 running + 2 queued").isFalse();
        assertThat(queue.inFlight()).isEqualTo(3);
        queue.leave();
        assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(order).containsExactly(1, 2);
        assertThat(queue.inFlight()).isZero();
    }
}
