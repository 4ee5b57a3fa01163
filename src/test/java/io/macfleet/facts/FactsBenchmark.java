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
            simulation.apply(List.of(SimulatedInventory.ClusterSpec.fullMesh("four", four)), Map.of());
            simulation.cableFullMesh(four);
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
