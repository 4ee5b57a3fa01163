package io.macfleet.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prints how long loading, planning and applying a large inventory take (100 clusters of 5 machines, 10
 * files). Skipped unless asked for:
 * {@code ./mvnw -B -f control-plane.xml test -Dtest=InventoryBenchmarkTest -Dmacfleet.benchmarks=true}
 */
class InventoryBenchmarkTest {

    private static final int CLUSTERS = 100;
    private static final int MACHINES_PER_CLUSTER = 5;
    private static final int FILES = 10;

    @TempDir
    Path directory;

    @Test
    void loadPlanApply() throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("macfleet.benchmarks"), "benchmark: run with -Dmacfleet.benchmarks=true");
        Files.writeString(directory.resolve("fleet.yaml"), """
                defaults:
                  ssh:
                    user: admin
                    privateKey: file:~/.ssh/macfleet_ed25519
                  model: Mac15,14
                groups:
                  studio-512:
                    memoryGb: 512
                """);
        for (int file = 0; file < FILES; file++) {
            StringBuilder text = new StringBuilder("clusters:\n");
            int first = file * CLUSTERS / FILES;
            for (int cluster = first; cluster < first + CLUSTERS / FILES; cluster++) {
                text.append("  - name: llm-").append(cluster).append("\n    macosVersion: \"26.2\"\n");
            }
            text.append("machines:\n");
            for (int cluster = first; cluster < first + CLUSTERS / FILES; cluster++) {
                text.append("  - name: c").append(cluster).append("-studio-[1-").append(MACHINES_PER_CLUSTER).append("]\n")
                        .append("    address: 10.").append(cluster / 200).append('.').append(cluster % 200).append(".[1-")
                        .append(MACHINES_PER_CLUSTER).append("]\n")
                        .append("    cluster: llm-").append(cluster).append("\n    groups: [studio-512]\n");
            }
            Files.writeString(directory.resolve("part-" + file + ".yaml"), text);
        }
        List<Long> loads = new ArrayList<>();
        LoadResult result = null;
        for (int run = 0; run < 7; run++) {
            long start = System.nanoTime();
            result = InventoryLoader.load(directory);
            loads.add((System.nanoTime() - start) / 1_000_000);
        }
        assertThat(result.errors()).isEmpty();
        assertThat(result.inventory().machines()).hasSize(CLUSTERS * MACHINES_PER_CLUSTER);
        try (AgroalDataSource dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:benchmark;DB_CLOSE_DELAY=-1", "sa", null))) {
            DesiredStateStore store = new DesiredStateStore(dataSource);
            long start = System.nanoTime();
            Plan plan = store.plan(result.inventory());
            long planMillis = (System.nanoTime() - start) / 1_000_000;
            start = System.nanoTime();
            store.apply(result.inventory(), "benchmark", "benchmark");
            long applyMillis = (System.nanoTime() - start) / 1_000_000;
            start = System.nanoTime();
            assertThat(store.plan(result.inventory()).isEmpty()).isTrue();
            long replanMillis = (System.nanoTime() - start) / 1_000_000;
            System.out.printf("inventory benchmark: %d clusters, %d machines, %d files%n", CLUSTERS, plan.count(Plan.Action.ADD) - CLUSTERS, FILES + 1);
            System.out.printf("  load (validate + resolve), 7 runs in ms: %s (first includes warm-up)%n", loads);
            System.out.printf("  plan against an empty H2 database: %d ms; apply (%d rows + audit): %d ms; plan again (no changes): %d ms%n",
                    planMillis, plan.changes().size(), applyMillis, replanMillis);
        }
    }
}
