package io.macfleet.mdm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.MdmServer;
import io.macfleet.secrets.SecretReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The inventory's mdm.kind picks the adapter through the one registry. */
class MdmAdaptersTest {
    @TempDir
    Path directory;

    @Test
    void theKindPicksTheAdapterAndDefaultsToNanoHub() throws Exception {
        Path key = directory.resolve("key");
        Files.writeString(key, "k\n");
        try (MdmConnection connection = MdmAdapters.connect(new MdmServer("https://mdm.example.com:9004", SecretReference.of("file:" + key)), Duration.ofSeconds(1))) {
            assertThat(connection.describe()).isEqualTo("nanohub https://mdm.example.com:9004");
            assertThat(connection.declarative()).isPresent();
        }
        assertThatThrownBy(() -> MdmAdapters.connect(new MdmServer("fleet", "https://fleet.example.com", SecretReference.of("file:" + key)), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("the inventory's mdm.kind 'fleet' is not one macfleet knows (nanohub)");
        assertThatThrownBy(() -> MdmAdapters.connect(new MdmServer("nanohub", "https://mdm.example.com", null), Duration.ofSeconds(1)))
                .hasMessageContaining("has no apiToken");
    }

    @Test
    void theInventoryNamesTheKind() throws Exception {
        Files.writeString(directory.resolve("mdm.yaml"), "mdm:\n  kind: nanohub\n  url: https://mdm.example.com\n  apiToken: env:MACFLEET_MDM_TOKEN\n");
        LoadResult valid = InventoryLoader.load(directory);
        assertThat(valid.errors()).isEmpty();
        assertThat(valid.inventory().mdm().kind()).isEqualTo("nanohub");

        Files.writeString(directory.resolve("mdm.yaml"), "mdm:\n  kind: jamf\n  url: https://mdm.example.com\n");
        assertThat(InventoryLoader.load(directory).errors()).singleElement().asString().contains("mdm.yaml:2:").contains("kind");
    }
}
