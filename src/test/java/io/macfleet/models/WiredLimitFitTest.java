package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.SimulatedInventory;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code model fit} takes each Mac's usable GPU memory from its gathered {@code iogpu.wired_limit_mb} (the simulated
 * Macs answer it as macOS does, 0 unless set) and names where every figure came from.
 */
class WiredLimitFitTest {

    private static final List<String> CLUSTER = List.of("studio-01", "studio-02");

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;
    static ModelFits fits;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(directory, 3, "127.0.187.11");
        simulation.apply(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-w", CLUSTER)), Map.of());
        ModelCatalogue catalogue = new ModelCatalogue(simulation.dataSource, event -> { }, directory.resolve("home/models"),
                URI.create("http://127.0.0.1:9"), Optional.empty(), Optional.empty(), Clock.systemUTC());
        catalogue.add("tiny", TestModels.gguf(directory.resolve("src/tiny.gguf"), 15, 10_000, 3).toString(), Optional.empty(), Optional.empty(),
                "cli:test", HuggingFaceHub.Progress.NONE);
        fits = new ModelFits(simulation.desiredState, simulation.facts, catalogue);
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @Test
    void aSetLimitIsTakenFromTheFactsAndZeroMeansMacosDefaultShare() {
        // Before any gathering: the inventory's memoryGb, the limit not known.
        MemoryFit.Result before = fits.fit("llm-w", "tiny", Optional.empty(), Optional.empty());
        assertThat(before.machines().getFirst().usableFrom())
                .isEqualTo("default 75 % of 512.00 GiB from the inventory's memoryGb (iogpu.wired_limit_mb not gathered)");

        // studio-01 (512 GB) raised to 480 GiB; studio-02 (256 GB) keeps macOS's default (the sysctl says 0).
        simulation.fleet.machine("studio-01").faults().setWiredLimitMegabytes(491_520);
        simulation.facts.gather(simulation.facts.select("llm-w", List.of()), SimulatedInventory.settings(Duration.ofSeconds(10)));
        Map<String, FactsObservation> observed = simulation.facts.latest(CLUSTER);
        assertThat(observed.get("studio-01").wiredLimitMegabytes()).hasValue(491_520);
        assertThat(observed.get("studio-02").wiredLimitMegabytes()).hasValue(0);
        assertThat(observed.get("studio-02").facts().unreadableFacts()).isEmpty();

        MemoryFit.Result after = fits.fit("llm-w", "tiny", Optional.empty(), Optional.empty());
        MemoryFit.MacFit raised = after.machines().get(0);
        MemoryFit.MacFit byDefault = after.machines().get(1);
        assertThat(raised.usableBytes()).isEqualTo(491_520L << 20);
        assertThat(raised.usableFrom()).isEqualTo("wired limit 491520 MB from iogpu.wired_limit_mb");
        assertThat(byDefault.usableBytes()).isEqualTo(192L << 30);
        assertThat(byDefault.usableFrom()).isEqualTo("default 75 % of 256.00 GiB from hw.memsize (iogpu.wired_limit_mb is 0: macOS's default)");
        assertThat(after.message()).contains("studio-01: needs ", "of 480.00 GiB usable (wired limit 491520 MB from iogpu.wired_limit_mb)",
                "of 192.00 GiB usable (default 75 % of 256.00 GiB from hw.memsize");
    }
}
