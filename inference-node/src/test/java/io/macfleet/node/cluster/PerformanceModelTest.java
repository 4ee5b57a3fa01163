package io.macfleet.node.cluster;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The model's arithmetic on fixed inputs (its comparison with measurements is in cluster-bench's output and the docs). */
class PerformanceModelTest {
    /** 1.1 GB per token (the 1b-shaped Q8_0 model), 15 GB/s for one rank alone, 20 GB/s for the whole host. */
    private final PerformanceModel oneHost = new PerformanceModel(1.1e9, 15e9, 20e9, 16, 2048, 0.001);

    @Test
    void oneRankReadsEverythingAtItsOwnBandwidth() {
        PerformanceModel.Prediction one = oneHost.tensor(1, 1, 50e-6, 10e9);
        assertThat(one.weightSeconds()).isCloseTo(1.1e9 / 15e9, within(1e-12));
        assertThat(one.collectiveSeconds()).isZero();
        assertThat(one.seconds()).isCloseTo(1.1e9 / 15e9 + 0.001, within(1e-12));
    }

    @Test
    void ranksOnOneHostShareItsBandwidth() {
        // two ranks on one host: each gets min(15, 20 / 2) = 10 GB/s for its 0.55 GB
        PerformanceModel.Prediction shared = oneHost.tensor(2, 2, 50e-6, 10e9);
        assertThat(oneHost.bandwidthPerRank(2)).isEqualTo(10e9);
        assertThat(shared.weightSeconds()).isCloseTo(0.055, within(1e-12));
        // 2 all-reduces x 16 layers x (50 us + 2048 x 4 bytes x 1 peer / 10 GB/s)
        assertThat(shared.collectiveSeconds()).isCloseTo(32 * (50e-6 + 8192 / 10e9), within(1e-12));
        assertThat(shared.tokensPerSecond()).isCloseTo(1 / (0.055 + 32 * (50e-6 + 8192 / 10e9) + 0.001), within(1e-9));
        // on two hosts each rank has its own memory system: 0.55 GB at 15 GB/s
        PerformanceModel.Prediction apart = oneHost.tensor(2, 1, 50e-6, 10e9);
        assertThat(apart.weightSeconds()).isCloseTo(0.55e9 / 15e9, within(1e-12));
        assertThat(apart.tokensPerSecond()).isGreaterThan(shared.tokensPerSecond());
    }

    @Test
    void aHostFasterThanItsRanksTogetherDoesNotSpeedThemUp() {
        PerformanceModel roomy = new PerformanceModel(1.1e9, 15e9, 40e9, 16, 2048, 0);
        assertThat(roomy.bandwidthPerRank(2)).isEqualTo(15e9);
        assertThat(roomy.bandwidthPerRank(4)).isEqualTo(10e9);
        // four ranks on one 40 GB/s host: 0.275 GB each at 10 GB/s, 3 peers per all-reduce
        assertThat(roomy.tensor(4, 4, 100e-6, 10e9).seconds())
                .isCloseTo(0.0275 + 32 * (100e-6 + 2048 * 4 * 3 / 10e9), within(1e-12));
    }

    @Test
    void pipelineStagesRunOneAfterAnotherPlusAHopEach() {
        PerformanceModel.Prediction pipeline = oneHost.pipeline(2, 100e-6, 10e9);
        assertThat(pipeline.weightSeconds()).isCloseTo(1.1e9 / 15e9, within(1e-12));
        assertThat(pipeline.collectiveSeconds()).isCloseTo(2 * (100e-6 + 8192 / 10e9), within(1e-12));
        assertThat(oneHost.pipeline(1, 100e-6, 10e9).collectiveSeconds()).isZero();
    }

    @Test
    void separateHostsKeepThePublishedExoCheck() {
        // Calibrated on exo's 19.5 tokens/s on one M3 Ultra; the docs' table: 28.3 on 2 nodes, 43.2 on 4
        PerformanceModel exo = PerformanceModel.separateHosts(12.4e9, 12.4e9 * 19.5, 94, 4096, 0);
        assertThat(exo.tokensPerSecond(1, 50e-6, 10e9)).isCloseTo(19.5, within(1e-9));
        assertThat(exo.tokensPerSecond(2, 50e-6, 10e9)).isCloseTo(28.3, within(0.05));
        assertThat(exo.tokensPerSecond(4, 50e-6, 10e9)).isCloseTo(43.2, within(0.05));
    }

    @Test
    void memoryWeightedTensorParallelismIsPacedByTheLargestShare() {
        // DeepSeek V3.1 Q4_K_M on 2x512 + 2x256 GB M3 Ultra at 60% of 819 GB/s: the 512 GB ranks read a third of the
        // split weights plus the replicated projections; 122 all-reduces of 7168 floats to 3 peers
        PerformanceModel v31 = PerformanceModel.separateHosts(22.3e9, 0.6 * 819e9, 61, 7168, 0.002);
        PerformanceModel.Prediction weighted = v31.tensorWeighted(new double[] {512, 512, 256, 256}, 0.56e9, 100e-6, 10e9);
        assertThat(weighted.weightSeconds()).isCloseTo(((22.3e9 - 0.56e9) / 3 + 0.56e9) / (0.6 * 819e9), within(1e-12));
        assertThat(weighted.collectiveSeconds()).isCloseTo(122 * (100e-6 + 7168 * 4 * 3 / 10e9), within(1e-12));
        assertThat(weighted.tokensPerSecond()).isCloseTo(32.1, within(0.1));
        assertThat(v31.tensorWeighted(new double[] {1, 1, 1, 1}, 0.56e9, 100e-6, 10e9).tokensPerSecond())
                .isGreaterThan(weighted.tokensPerSecond());
    }

    @Test
    void badInputsAreRefusedByName() {
        assertThatThrownBy(() -> new PerformanceModel(1e9, 0, 1e9, 16, 2048, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rank bandwidth 0");
        assertThatThrownBy(() -> oneHost.tensor(2, 3, 50e-6, 10e9))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ranks 2 with 3 per host");
    }
}
