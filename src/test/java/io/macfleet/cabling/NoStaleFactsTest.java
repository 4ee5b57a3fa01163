package io.macfleet.cabling;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.facts.SimulatedInventory;
import io.macfleet.simulator.FaultStep;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13, no stale facts passed off as fresh: a check with no facts is "unknown", not "pipeline parallel only"; a
 * refresh that a hung Mac does not answer says so, names the age of its stored facts and does not use them, and no
 * finding makes up a fix for the cables of a Mac that did not answer.
 */
class NoStaleFactsTest {

    private static final List<String> FOUR = List.of("studio-01", "studio-02", "studio-03", "studio-04");

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;
    static ClusterCabling live;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(directory, 4, "127.0.0.81");
        simulation.cableFullMesh(FOUR);
        simulation.apply(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-a", FOUR)), Map.of());
        live = new ClusterCabling(simulation.facts);
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @Test
    void withoutFactsTheVerdictIsUnknownAndAHungMacsStaleFactsAreNamedAndNotUsed() {
        CablingReport none = live.cluster("llm-a", Optional.empty()).check();
        assertThat(none.verdict()).isEqualTo("unknown: no facts yet (run macfleet facts)");
        assertThat(none.findings()).extracting(Finding::code).containsOnly(Finding.Code.MISSING_FACTS);

        ClusterCabling.Refreshed fresh = live.refreshed("llm-a", SimulatedInventory.settings(Duration.ofSeconds(5)));
        assertThat(fresh.notes()).isEmpty();
        assertThat(fresh.cluster().check().passed()).isTrue();

        simulation.fleet.inject(FaultStep.machine("studio-02", "hang"));
        try {
            ClusterCabling.Refreshed refreshed = live.refreshed("llm-a", SimulatedInventory.settings(Duration.ofSeconds(2)));
            assertThat(refreshed.notes()).singleElement().asString()
                    .startsWith("studio-02 did not answer the refresh (studio-02: `sw_vers`: ")
                    .contains("its stored facts from ").containsPattern("\\(\\d+ s old\\) were not used: its checks are unknown");
            CablingReport report = refreshed.cluster().check();
            // Gathering its facts again would only wait for it again: the report says it does not answer, and what to do.
            assertThat(report.verdict()).isEqualTo("unknown: studio-02 does not answer over SSH (is it on and reachable? a hung Mac needs a power cycle)");
            assertThat(report.findings()).singleElement().satisfies(finding -> {
                assertThat(finding.code()).isEqualTo(Finding.Code.MISSING_FACTS);
                assertThat(finding.machines()).containsExactly("studio-02");
                assertThat(finding.message()).startsWith("studio-02 did not answer over SSH (studio-02: `sw_vers`: ");
                assertThat(finding.fix()).startsWith("Find out why studio-02 does not answer").doesNotContain("macfleet facts");
            });
            // Its peers' cables end at a Mac: most likely the silent one, not a Mac outside the cluster.
            assertThat(CablingText.text(report)).contains("(probably studio-02, whose facts are missing)").doesNotContain("not in the cluster");
        } finally {
            simulation.heal();
        }
    }
}
