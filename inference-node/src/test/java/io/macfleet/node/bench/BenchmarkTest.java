package io.macfleet.node.bench;

import io.macfleet.node.kernel.WorkerPool;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BenchmarkTest {
    private static final long MB = 1L << 20;

    @Test
    void bandwidthBufferFollowsTheStreamRule() {
        // 480 MB L3 (this machine): 4x = 1920 MB, a multiple of 64 MB already
        assertThat(Benchmark.streamRuleBytes(491520 * 1024L, 23_000 * MB)).isEqualTo(1920 * MB);
        // rounded up to 64 MB
        assertThat(Benchmark.streamRuleBytes(33 * MB, 23_000 * MB)).isEqualTo(512 * MB); // floor of 512 MB
        assertThat(Benchmark.streamRuleBytes(260 * MB, 23_000 * MB)).isEqualTo(1088 * MB);
        // unknown cache size: 2 GB
        assertThat(Benchmark.streamRuleBytes(-1, -1)).isEqualTo(2048 * MB);
        // never more than half the available memory
        assertThat(Benchmark.streamRuleBytes(480 * MB, 3000 * MB)).isEqualTo(1472 * MB);
    }

    @Test
    void cacheSizesAsSysfsWritesThem() {
        assertThat(Benchmark.cacheSize("491520K")).isEqualTo(491520 * 1024L);
        assertThat(Benchmark.cacheSize("32M")).isEqualTo(32 * MB);
        assertThat(Benchmark.cacheSize("4096")).isEqualTo(4096);
        assertThat(Benchmark.lastLevelCacheBytes()).isNotZero(); // -1 (unknown) or a size
    }

    @Test
    void streamingReadCoversSeveralSegmentsWithOneShareEach() {
        try (Arena arena = Arena.ofShared(); WorkerPool pool = new WorkerPool(2)) {
            List<MemorySegment> segments = List.of(arena.allocate(3 * MB + 512, 64), arena.allocate(256, 64),
                    arena.allocate(5 * MB, 64));
            assertThat(Benchmark.bandwidth(pool, segments, 2)).isPositive();
        }
    }

    @Test
    void majorPageFaultsAreCountedWhereProcExists() {
        long faults = Benchmark.majorPageFaults();
        if (java.nio.file.Files.exists(java.nio.file.Path.of("/proc/self/stat"))) {
            assertThat(faults).isNotNegative();
            assertThat(Benchmark.majorPageFaults()).isGreaterThanOrEqualTo(faults);
        } else {
            assertThat(faults).isEqualTo(-1);
        }
    }
}
