package io.macfleet.node.server;

import io.macfleet.node.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeConfigTest {
    @TempDir
    Path directory;

    @Test
    void readsEveryKeyAndResolvesTheModelPath() throws IOException {
        Path file = directory.resolve("node.json");
        Files.writeString(file, """
                {"model": "models/m.gguf", "host": "127.0.0.2", "port": 9000, "contextLength": 2048, "threads": 3,
                 "maxQueuedRequests": 4, "modelId": "llama", "defaultMaxTokens": 100}""");
        NodeConfig config = NodeConfig.read(file);
        assertThat(config).isEqualTo(new NodeConfig(directory.resolve("models/m.gguf").toAbsolutePath(), "127.0.0.2",
                9000, 2048, 3, 4, "llama", 100));
    }

    @Test
    void rejectsUnknownKeysAndWrongTypes() throws IOException {
        Path file = directory.resolve("bad.json");
        Files.writeString(file, "{\"prot\": 80}");
        assertThatThrownBy(() -> NodeConfig.read(file)).hasMessageContaining("bad.json").hasMessageContaining("unknown key 'prot'");
        Files.writeString(file, "{\"port\": \"80\"}");
        assertThatThrownBy(() -> NodeConfig.read(file)).hasMessageContaining("'port' must be an integer");
    }

    @Test
    @SuppressWarnings("unchecked")
    void schemaListsExactlyTheKeysTheReaderAccepts() throws IOException {
        Path schema = Path.of("../schemas/inference-node-config.schema.json");
        Map<String, Object> properties = (Map<String, Object>) ((Map<?, ?>) Json.parse(Files.readString(schema))).get("properties");
        assertThat(properties.keySet()).containsExactlyInAnyOrder("$schema", "model", "host", "port", "contextLength",
                "threads", "maxQueuedRequests", "modelId", "defaultMaxTokens");
    }
}
