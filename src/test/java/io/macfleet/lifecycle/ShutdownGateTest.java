package io.macfleet.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** A round under way finishes before the stop goes on; no round starts after it. */
class ShutdownGateTest {

    @Test
    void theStopWaitsForTheRoundUnderWayAndNoRoundStartsAfterIt() throws Exception {
        ShutdownGate gate = new ShutdownGate();
        CountDownLatch inRound = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicBoolean roundDone = new AtomicBoolean();
        Thread round = Thread.ofPlatform().start(() -> {
            assertThat(gate.enter()).isTrue();
            try {
                inRound.countDown();
                finish.await();
                roundDone.set(true);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                gate.leave();
            }
        });
        inRound.await();
        Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
            finish.countDown();
        });
        assertThat(gate.stop(Duration.ofSeconds(10))).isTrue();
        assertThat(roundDone).as("the stop returned only after the round").isTrue();
        assertThat(gate.stopping()).isTrue();
        assertThat(gate.enter()).as("a round after the stop").isFalse();
        round.join();
    }

    @Test
    void aRoundThatDoesNotEndInTimeDoesNotHoldTheStopForever() throws Exception {
        ShutdownGate gate = new ShutdownGate();
        assertThat(gate.enter()).isTrue();
        long start = System.nanoTime();
        assertThat(gate.stop(Duration.ofMillis(200))).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        gate.leave();
        assertThat(gate.enter()).isFalse();
    }
}
