package io.macfleet.facts;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Full facts (11 commands each, parsed and stored in H2) from 4 and from 200 simulated Macs, over real SSH on
 * loopback, simulator and client in the same JVM. Run with:
 * {@code ./mvnw -f control-plane.xml test -Dtest=FactsBenchmark -Dmacfleet.benchmarks=true [-Dmacfleet.benchmark.parallel=32,64]}
 */
@EnabledIfSystemProperty(named = "macfleet.benchmarks", matches = "true")
class FactsBenchmark {

    private static final int FLEET = 200;

    @Test
    void gatherFullFacts() throws Exception {
        List<Integer> parallelisms = List.of(System.getProperty("macfleet.benchmark.parallel", "32,64").split(",")).stream()
                .map(String::strip).map(Integer::parseInt).toList();
        long startedAt = System.nanoTime();
        try (SimulatedInventory simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-facts-benchmark"), FLEET, "127.0.1.1")) {
            List<String> all = IntStream.rangeClosed(1, FLEET).mapToObj(index -> SimulatedInventory.name(index, FLEET)).toList();
            List<String> four = all.subList(0, 4);
            List<String> six = all.subList(4, 10);
            simulation.apply(List.of(SimulatedInventory.ClusterSpec.fullMesh("four", four), SimulatedInventory.ClusterSpec.fullMesh("six", six)), Map.of());
            simulation.cableFullMesh(four);
            for (io.macfleet.inventory.Topology.Link link : io.macfleet.cabling.PortPlan.fullMesh("six", six).cables()) {
                simulation.fleet.cabling().plug(link.first().toString(), link.second().toString(), io.macfleet.simulator.LinkSpeed.TB5);
            }
            System.out.printf(Locale.ROOT, "started %d simulated Macs in %d ms%n", FLEET, Duration.ofNanos(System.nanoTime() - startedAt).toMillis());
            FactsService facts = simulation.facts;

            // Warm-up: class loading and JIT of the client and the simulator.
            run(facts, four, 4);
            run(facts, all.subList(0, 40), 32);

            List<Long> fourTimes = new ArrayList<>();
            for (int round = 0; round < 5; round++) {
                fourTimes.add(run(facts, four, 4));
            }
            System.out.printf(Locale.ROOT, "4 Macs, 4 in parallel: %s ms (median %d ms)%n", fourTimes, median(fourTimes));
            // Live cabling check of a 6-machine cluster from stored facts (database read, parse, check), and with --refresh.
            io.macfleet.cabling.ClusterCabling live = new io.macfleet.cabling.ClusterCabling(facts);
            run(facts, six, 6);
            List<Long> checks = new ArrayList<>();
            for (int round = 0; round < 200; round++) {
                long start = System.nanoTime();
                assertThat(live.cluster("six", java.util.Optional.empty()).check().passed()).isTrue();
                checks.add((System.nanoTime() - start) / 1000);
            }
            List<Long> sortedChecks = checks.stream().sorted().toList();
            System.out.printf(Locale.ROOT, "cabling check of 6 Macs from stored facts: median %d us, p99 %d us, first %d us%n",
                    median(checks), sortedChecks.get(sortedChecks.size() * 99 / 100), checks.getFirst());
            List<Long> refreshed = new ArrayList<>();
            for (int round = 0; round < 5; round++) {
                long start = System.nanoTime();
                assertThat(live.cluster("four", java.util.Optional.of(SimulatedInventory.settings(Duration.ofSeconds(60)))).check().passed()).isTrue();
                refreshed.add((System.nanoTime() - start) / 1_000_000);
            }
            System.out.printf(Locale.ROOT, "cabling check --refresh of 4 Macs (gather, store, check): %s ms (median %d ms)%n", refreshed, median(refreshed));
            for (int parallel : parallelisms) {
                List<Long> times = new ArrayList<>();
                for (int round = 0; round < 2; round++) {
                    times.add(run(facts, all, parallel));
                }
                System.out.printf(Locale.ROOT, "%d Macs, %d in parallel: %s ms%n", FLEET, parallel, times);
            }
        }
    }

    private static long run(FactsService facts, List<String> machines, int parallel) {
        FactsService.Gathering gathering = facts.gather(facts.select(null, machines),
                SimulatedInventory.settings(Duration.ofSeconds(60)).withParallelism(parallel));
        assertThat(gathering.failed()).as(gathering.results().stream().filter(result -> !result.succeeded())
                .map(result -> String.valueOf(result.error())).findFirst().orElse("")).isZero();
        return gathering.elapsed().toMillis();
    }

    private static long median(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }
}
