package io.macfleet.node.cluster;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CollectivesTest {
    @Test
    void meshAndRingAllReduceAreBitIdenticalOnEveryRankAndSumCorrectly() throws Exception {
        for (int size : new int[] {2, 3, 4}) {
            List<Transport> mesh = ClusterBenchmark.loopbackMesh(size);
            try {
                for (int length : new int[] {7, 2048, 100_000}) { // 100 000 floats: ring on 3 and 4 ranks
                    float[][] values = new float[size][length];
                    double[] exact = new double[length];
                    Random random = new Random(length);
                    for (int r = 0; r < size; r++) {
                        for (int i = 0; i < length; i++) {
                            values[r][i] = (float) random.nextGaussian();
                            exact[i] += values[r][i];
                        }
                    }
                    List<Thread> threads = new ArrayList<>();
                    for (int r = 0; r < size; r++) {
                        int rank = r;
                        threads.add(Thread.ofPlatform().start(() ->
                                new Collectives(mesh.get(rank), 10_000_000_000L).allReduce(values[rank], length)));
                    }
                    for (Thread thread : threads) {
                        thread.join();
                    }
                    for (int r = 1; r < size; r++) {
                        assertThat(values[r]).as("rank %d of %d, %d floats", r, size, length).isEqualTo(values[0]);
                    }
                    for (int i = 0; i < length; i++) {
                        assertThat((double) values[0][i]).isCloseTo(exact[i], org.assertj.core.data.Offset.offset(1e-4));
                    }
                }
            } finally {
                mesh.forEach(Transport::close);
            }
        }
    }

    @Test
    void gatherPutsEveryRanksPartInPlaceOnRankZero() throws Exception {
        int size = 3;
        int[] starts = {0, 5, 11, 14}; // uneven parts, as the vocabulary split by weight gives
        List<Transport> mesh = ClusterBenchmark.loopbackMesh(size);
        try {
            float[][] values = new float[size][14];
            for (int r = 0; r < size; r++) {
                for (int i = starts[r]; i < starts[r + 1]; i++) {
                    values[r][i] = 100 * r + i; // each rank fills only its own part
                }
            }
            List<Thread> threads = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                int rank = r;
                threads.add(Thread.ofPlatform().start(() ->
                        new Collectives(mesh.get(rank), 10_000_000_000L).gather(values[rank], starts)));
            }
            for (Thread thread : threads) {
                thread.join();
            }
            float[] expected = new float[14];
            for (int r = 0; r < size; r++) {
                for (int i = starts[r]; i < starts[r + 1]; i++) {
                    expected[i] = 100 * r + i;
                }
            }
            assertThat(values[0]).isEqualTo(expected);
        } finally {
            mesh.forEach(Transport::close);
        }
    }

    @Test
    void aClosedPeerFailsTheReceiveAtOnce() throws Exception {
        List<Transport> mesh = ClusterBenchmark.loopbackMesh(2);
        try {
            mesh.get(1).close();
            long start = System.nanoTime();
            assertThatThrownBy(() -> mesh.get(0).receive(1, 5, new float[4], 0, 10_000_000_000L))
                    .isInstanceOf(Transport.PeerFailedException.class).hasMessageContaining("rank 1 closed its connection");
            assertThat(System.nanoTime() - start).isLessThan(2_000_000_000L);
        } finally {
            mesh.forEach(Transport::close);
        }
    }

    @Test
    void aWrongTagIsAProtocolError() throws Exception {
        List<Transport> mesh = ClusterBenchmark.loopbackMesh(2);
        try {
            mesh.get(1).send(0, 7, new int[] {1, 2}, 0, 2);
            assertThatThrownBy(() -> mesh.get(0).receive(1, 8, new int[4], 0, 1_000_000_000L))
                    .hasMessageContaining("tag 7 where this rank expected 8");
        } finally {
            mesh.forEach(Transport::close);
        }
    }
}
