package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.Inventory;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A status column added by a class alone: {@link InventoryMemoryColumn}, a bean of the test code, appears in the
 * overview, the cluster page and the machine page, in its place by order, without any change to the console's classes.
 */
@QuarkusTest
@TestProfile(StatusColumnExtensionTest.WithInventoryMemoryColumn.class)
class StatusColumnExtensionTest {

    public static class WithInventoryMemoryColumn implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("test.inventory-memory-column", "true");
        }
    }

    @Inject
    DesiredStateStore store;

    @AfterEach
    void applyNothing() {
        store.apply(new Inventory(List.of(), List.of(), null), "status-column-test", "nothing");
    }

    private static Document page(TestAccounts.Session viewer, String path) {
        return Jsoup.parse(viewer.withoutCsrf().when().get(path).then().statusCode(200).extract().asString());
    }

    @Test
    void aColumnBeanOfTheTestCodeIsShownInItsPlace() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-status-column");
        ExampleInventory.writeTo(directory, true);
        store.apply(InventoryLoader.load(directory).inventory(), "status-column-test", directory.toString());
        TestAccounts.Session viewer = TestAccounts.login(Role.VIEWER);

        Document overview = page(viewer, "/console");
        assertThat(overview.select("table.machines thead th").eachText())
                .containsExactly("Machine", "Cluster", "Reachable", "macOS", "RDMA", "Memory", "Cabling", "Drift", "Provisioning", "Inference");
        assertThat(overview.select("table.machines tbody tr[data-machine=studio-01] td.status .badge").eachText()).element(3).isEqualTo("512 GB");
        assertThat(overview.select("table.machines tbody tr[data-machine=studio-03] td.status .badge").eachText()).element(3).isEqualTo("256 GB");

        Document cluster = page(viewer, "/console/clusters/llm-a");
        assertThat(cluster.select("table.machines thead th").eachText()).contains("Memory");

        Document machine = page(viewer, "/console/machines/studio-03");
        assertThat(machine.select("dl.statuses dt").eachText()).containsExactly("Reachable", "macOS", "RDMA", "Memory (inventory)", "Cabling",
                "Drift", "Provisioning", "Inference node");
        assertThat(machine.select("dl.statuses dd").get(3).text()).contains("256 GB").contains("the inventory says studio-03 has 256 GB");
    }
}
