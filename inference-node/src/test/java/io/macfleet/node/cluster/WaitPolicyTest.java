package io.macfleet.node.cluster;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WaitPolicyTest {
    private static ClusterFile loopback(int ranks) {
        return loopback(ranks, ClusterFile.Parallelism.PIPELINE);
    }

    private static ClusterFile loopback(int ranks, ClusterFile.Parallelism parallelism) {
        int[] ports = new int[ranks];
        for (int r = 0; r < ranks; r++) {
            ports[r] = 50000 + r; // never bound: the policy only reads the file
        }
        return ClusterFile.parse(ClusterFile.loopback(ranks, parallelism, ports, ports), "local");
    }

    @Test
    void ranksWithACorePerThreadSpinThroughTheirWaits() {
        WaitPolicy policy = WaitPolicy.of("auto", -1, loopback(2), 1, 1, 2);
        assertThat(policy.spins()).isTrue();
        assertThat(policy.spinNanos()).isEqualTo(WaitPolicy.SPIN_THROUGH_NANOS);
        assertThat(policy.reason()).contains("2 ranks x 1 thread on 2 processors of machine localhost");
    }

    @Test
    void ranksSharingCoresParkAfterAShortSpin() {
        // 3 or 4 ranks of the tests on a 2-core machine; or 2 ranks of 2 threads each
        assertThat(WaitPolicy.of("auto", -1, loopback(3), 0, 1, 2).spinNanos()).isEqualTo(WaitPolicy.PARK_AFTER_NANOS);
        assertThat(WaitPolicy.of("auto", -1, loopback(4), 2, 1, 2).spins()).isFalse();
        assertThat(WaitPolicy.of("auto", -1, loopback(2), 0, 2, 2).spins()).isFalse();
        assertThat(WaitPolicy.of("auto", -1, loopback(2), 0, 2, 2).reason()).startsWith("park (cores shared: 2 ranks x 2 threads");
    }

    @Test
    void aRankAloneOnItsMachineCountsOnlyItself() {
        // one rank per Mac, as a cabled cluster is: each rank's threads against its own Mac's cores
        ClusterFile rack = ClusterFile.parse(ClusterFileTest.CABLING.replace("\"cluster\": \"rack\",",
                "\"cluster\": \"rack\", \"parallelism\": \"pipeline\","), "cluster.json");
        assertThat(rack.parallelism()).isEqualTo(ClusterFile.Parallelism.PIPELINE);
        assertThat(WaitPolicy.of("auto", -1, rack, 2, 24, 24).spins()).isTrue();
        assertThat(WaitPolicy.of("auto", -1, rack, 2, 25, 24).spins()).isFalse();
    }

    @Test
    void tensorRanksFollowTheSameRuleAsPipelineRanks() {
        ClusterFile tensor = loopback(2, ClusterFile.Parallelism.TENSOR);
        assertThat(WaitPolicy.of("auto", -1, tensor, 0, 1, 2).spins()).isTrue();
        assertThat(WaitPolicy.of("auto", -1, tensor, 0, 1, 2).reason()).startsWith("spin (a core per thread");
        assertThat(WaitPolicy.of("auto", -1, tensor, 0, 2, 2).spins()).isFalse();
        assertThat(WaitPolicy.of("auto", -1, loopback(3, ClusterFile.Parallelism.TENSOR), 0, 1, 2).reason()).startsWith("park (cores shared");
        assertThat(WaitPolicy.of("park", -1, tensor, 0, 1, 2).spins()).isFalse();
    }

    @Test
    void thePropertyOverridesTheChoiceAndTheSpinLength() {
        assertThat(WaitPolicy.of("park", -1, loopback(2), 0, 1, 2).spins()).isFalse();
        assertThat(WaitPolicy.of("spin", -1, loopback(4), 0, 1, 2).spins()).isTrue();
        WaitPolicy custom = WaitPolicy.of("auto", 1000, loopback(4), 0, 1, 2);
        assertThat(custom.spinNanos()).isEqualTo(1_000_000);
        assertThat(custom.reason()).contains("spin 1000 us");
        assertThatThrownBy(() -> WaitPolicy.of("always", -1, loopback(2), 0, 1, 2))
                .hasMessageContaining("macfleet.node.wait must be spin, park or auto, got 'always'");
    }
}
