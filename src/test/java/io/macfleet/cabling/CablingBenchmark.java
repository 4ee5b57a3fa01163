package io.macfleet.cabling;

import io.macfleet.facts.HardwarePortsParser;
import io.macfleet.facts.SimpleOutputParsers;
import io.macfleet.facts.ThunderboltParser;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * How long the cabling check of a 6-machine cluster takes from stored facts (the stored command output is
 * parsed, then checked). Run with: ./mvnw -f control-plane.xml test -Dtest=CablingBenchmark -Dmacfleet.benchmarks=true
 */
@EnabledIfSystemProperty(named = "macfleet.benchmarks", matches = "true")
class CablingBenchmark {

    @Test
    void sixMachineCheckFromStoredFacts() {
        ClusterFixture cluster = ClusterFixture.fullMesh("studio-01", "studio-02", "studio-03", "studio-04", "studio-05", "studio-06");
        List<String[]> stored = new ArrayList<>();
        for (String machine : cluster.names()) {
            stored.add(new String[] {machine, cluster.thunderboltJson(machine), ClusterFixture.hardwarePorts(), "enabled\n",
                    cluster.ibvDevices(machine), cluster.softwareVersion(machine), cluster.ifconfig(machine)});
        }
        PlannedTopology plan = PlannedTopology.fullMesh("llm-a", cluster.names());
        long coldStart = System.nanoTime();
        CablingReport first = checkOnce(plan, stored);
        long cold = System.nanoTime() - coldStart;
        if (!first.passed()) {
            throw new AssertionError(first.findings().toString());
        }
        int runs = 2000;
        long[] nanos = new long[runs];
        for (int run = 0; run < runs; run++) {
            long start = System.nanoTime();
            checkOnce(plan, stored);
            nanos[run] = System.nanoTime() - start;
        }
        Arrays.sort(nanos);
        System.out.printf("cabling check, 6 machines, from stored facts (parse + check): first call %.2f ms, then median %.3f ms, p99 %.3f ms over %d runs%n",
                cold / 1e6, nanos[runs / 2] / 1e6, nanos[runs * 99 / 100] / 1e6, runs);
    }

    private static CablingReport checkOnce(PlannedTopology plan, List<String[]> stored) {
        List<MachineCablingFacts> facts = new ArrayList<>();
        for (String[] machine : stored) {
            facts.add(new MachineCablingFacts(machine[0], Optional.empty(), ThunderboltParser.parse(machine[1]),
                    HardwarePortsParser.parse(machine[2]), Optional.of(SimpleOutputParsers.rdmaEnabled(machine[3])),
                    Optional.of(SimpleOutputParsers.rdmaDevices(machine[4])),
                    Optional.of(SimpleOutputParsers.softwareVersion(machine[5]).productVersion()),
                    Optional.of(SimpleOutputParsers.bridgeActive(machine[6]))));
        }
        return CablingCheck.check(plan, facts, Optional.of("26.2"));
    }
}
