package io.macfleet.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.inventory.InferenceSettings;
import io.macfleet.inventory.InventoryError;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.ssh.SshTarget;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime seam without Macs: inventory settings checked by each runtime's schema, the registry, a runtime that
 * exists only in this test, and the llama.cpp plan's refusals (memory, cabling, tensor split).
 */
class RuntimeSeamTest {

    @TempDir
    Path directory;

    static final String CLUSTER = """
            clusters:
              - name: llm-a
                macosVersion: "26.2"
                inference:
                  runtime: %s
                  settings:
            %s
            machines:
              - name: studio-01
                address: 10.0.0.1
                cluster: llm-a
                role: coordinator
              - name: studio-02
                address: 10.0.0.2
                cluster: llm-a
            """;

    @Test
    void anUnknownSettingOfARuntimeIsAFileLineColumnError() {
        LoadResult result = InventoryLoader.loadDocument(CLUSTER.formatted("llama.cpp", "        rpcPort: 50052\n        ngl: 99"));
        assertThat(result.errors()).extracting(InventoryError::toString).singleElement().asString()
                .contains("inventory.yaml:8:9", "unknown setting 'ngl' of runtime llama.cpp");
    }

    @Test
    void settingsOfTheWrongShapeAndLiteralSecretsAreRefusedWhereTheyAre() {
        LoadResult result = InventoryLoader.loadDocument(CLUSTER.formatted("llama.cpp",
                "        tensorSplit: by-size\n        apiKey: hunter2"));
        assertThat(result.errors()).extracting(InventoryError::toString)
                .anySatisfy(error -> assertThat(error).contains("inventory.yaml:7:9", "inference.settings.tensorSplit"))
                .anySatisfy(error -> assertThat(error).contains("inventory.yaml:8:9", "apiKey"))
                .noneSatisfy(error -> assertThat(error).contains("hunter2"));
    }

    @Test
    void anUnknownRuntimeIsNamedWithTheRuntimesThatExist() {
        LoadResult result = InventoryLoader.loadDocument(CLUSTER.formatted("vllm", "        {}"));
        assertThat(result.errors()).extracting(InventoryError::toString).singleElement().asString()
                .contains("inventory.yaml:5:7", "unknown runtime 'vllm'", "bundled or llama.cpp");
    }

    @Test
    void aValidLlamaCppClusterKeepsItsSettingsAndTheDefaultIsBundled() {
        LoadResult result = InventoryLoader.loadDocument(CLUSTER.formatted("llama.cpp", "        tensorSplit: [3, 1]\n        apiKey: env:MACFLEET_KEY"));
        assertThat(result.errors()).isEmpty();
        InferenceSettings inference = result.inventory().clusters().getFirst().inference();
        assertThat(inference.runtime()).isEqualTo("llama.cpp");
        assertThat(inference.settings()).containsEntry("tensorSplit", List.of(3, 1)).containsEntry("apiKey", "env:MACFLEET_KEY");
        assertThat(new InferenceSettings(null, InferenceSettings.Parallelism.TENSOR, 8080).runtime()).isEqualTo("bundled");
    }

    @Test
    void aRuntimeWrittenInTestCodeIsFoundByNameAndPlans() {
        InferenceRuntimes runtimes = InferenceRuntimes.standard().with(new EchoRuntime());
        assertThat(runtimes.all()).extracting(InferenceRuntime::name).containsExactly("bundled", "llama.cpp", "mlx", "test-echo");
        assertThat(runtimes.allLabels()).contains("io.macfleet.inference-node", LlamaCppRuntime.SERVER_LABEL, EchoRuntime.LABEL);
        RuntimePlan plan = runtimes.get("test-echo").plan(cluster(Map.of(), 512, 512));
        assertThat(plan.machines()).hasSize(2);
        assertThat(plan.endpoint()).isEqualTo("http://10.0.0.1:8080/v1");
        assertThat(InventoryLoader.loadDocument(CLUSTER.formatted("test-echo", "        greeting: hello")).errors()).isEmpty();
        assertThatThrownBy(() -> runtimes.with(new EchoRuntime())).hasMessageContaining("two inference runtimes are named test-echo");
        assertThatThrownBy(() -> runtimes.get("vllm")).hasMessageContaining("unknown inference runtime 'vllm'");
    }

    @Test
    void tensorSplitByMemoryEvenOrGiven() {
        assertThat(LlamaCppRuntime.tensorSplit(cluster(Map.of(), 512, 512, 256, 256))).containsExactly("2", "2", "1", "1");
        assertThat(LlamaCppRuntime.tensorSplit(cluster(Map.of("tensorSplit", "even"), 512, 512, 256, 256))).containsExactly("1", "1", "1", "1");
        assertThat(LlamaCppRuntime.tensorSplit(cluster(Map.of("tensorSplit", List.of(3, 1.5)), 512, 256))).containsExactly("3", "1.5");
        assertThatThrownBy(() -> LlamaCppRuntime.tensorSplit(cluster(Map.of("tensorSplit", List.of(1)), 512, 256)))
                .hasMessageContaining("has 1 numbers for 2 Macs");
    }

    @Test
    void aModelLargerThanTheUsableMemoryIsRefusedWithTheNumbers() throws Exception {
        Path model = directory.resolve("big.gguf");
        try (var file = new java.io.RandomAccessFile(model.toFile(), "rw")) {
            file.setLength(4L << 30);
        }
        assertThatThrownBy(() -> LlamaCppRuntime.checkMemory(cluster(Map.of(), 2, 2, 1), model, Files.size(model)))
                .isInstanceOf(RuntimeRefused.class)
                .hasMessageContaining("model big.gguf is 4.0 GB, more than the 3.8 GB cluster llm-a can give it")
                .hasMessageContaining("[2, 2, 1] GB of memory, 5 GB in all");
    }

    @Test
    void aPeerWithoutAThunderboltAddressTowardTheHeadIsRefusedWithTheCablingFix() throws Exception {
        Path build = directory.resolve("bin");
        Files.createDirectories(build);
        Files.writeString(build.resolve("llama-server"), "");
        Files.writeString(build.resolve("ggml-rpc-server"), "");
        Path model = Files.writeString(directory.resolve("m.gguf"), "GGUF");
        RuntimeCluster cluster = new RuntimeCluster("llm-a", new InferenceSettings(null, InferenceSettings.Parallelism.TENSOR, 8080, "llama.cpp",
                Map.of("build", build.toString())), List.of(machine(0, "studio-01", 512, Map.of("studio-02", "192.168.0.1")),
                machine(1, "studio-02", 512, Map.of())), Optional.of(model), Optional.empty(), List.of());
        assertThatThrownBy(() -> new LlamaCppRuntime().plan(cluster)).isInstanceOf(RuntimeRefused.class)
                .hasMessageContaining("no Thunderbolt address known toward the head studio-01 on studio-02")
                .hasMessageContaining("cable each of studio-02 to studio-01", "thunderbolt-network");
    }

    @Test
    void macsThatWouldRunDifferentBuildsAreRefusedNamingEachMacsBuild() {
        List<RuntimeDeployer.Staged> staged = List.of(
                new RuntimeDeployer.Staged("studio-01", List.of(), Optional.of("6640 (abc1234)"), false, true),
                new RuntimeDeployer.Staged("studio-02", List.of(), Optional.of("6641 (def5678)"), false, true),
                new RuntimeDeployer.Staged("studio-03", List.of(), Optional.empty(), false, true));
        assertThatThrownBy(() -> RuntimeDeployer.checkSameBuild("llama.cpp", staged)).isInstanceOf(RuntimeRefused.class)
                .hasMessageContaining("studio-01 6640 (abc1234), studio-02 6641 (def5678), studio-03 unreadable")
                .hasMessageContaining("nothing was switched");
        RuntimeDeployer.checkSameBuild("llama.cpp", staged.subList(0, 1));
    }

    @Test
    void theBuildAndTheTransportAreReadFromLlamaCppsOwnLines() {
        LlamaCppRuntime runtime = new LlamaCppRuntime();
        // As llama-server --version of the node-llama-cpp 3.22.1 source (.ci/llama-cpp.sh) printed it here, and in the
        // older "version: N (commit)" form of llama.cpp's 2025 releases.
        assertThat(runtime.build("0.00.010.337 I srv  llama_server: initializing ...\nversion: 0.5.0-dev (build 1, commit de3ff81)\n"
                + "built with GNU 12.2.0 for Linux x86_64\n")).hasValue("0.5.0-dev build 1 (de3ff81)");
        assertThat(runtime.build("version: 6640 (abc1234)\nbuilt with Apple clang\n")).hasValue("6640 (abc1234)");
        assertThat(runtime.build("llama-server: command not found")).isEmpty();
        assertThat(runtime.transport(LlamaCppRuntime.RPC_LABEL, "  transport      : TCP\nAccepted client connection\n"))
                .hasValue("tcp (fallback: built without RDMA)");
        assertThat(runtime.transport(LlamaCppRuntime.RPC_LABEL, "  transport      : TCP (RDMA auto-negotiate enabled)\nAccepted client connection\n"
                + "RDMA(Apple/UC) activated: qpn=1->2 mtu=4096 rx_depth=64\n")).hasValue("rdma");
        assertThat(runtime.transport(LlamaCppRuntime.RPC_LABEL, "  transport      : TCP (RDMA auto-negotiate enabled)\nAccepted client connection\n"
                + "RDMA activate failed, staying on TCP\n")).hasValue("tcp (fallback: RDMA activation failed)");
        assertThat(runtime.transport(LlamaCppRuntime.SERVER_LABEL, "anything")).isEmpty();
    }

    static RuntimeCluster cluster(Map<String, Object> settings, int... memoryGb) {
        List<RuntimeCluster.Machine> machines = new java.util.ArrayList<>();
        for (int rank = 0; rank < memoryGb.length; rank++) {
            machines.add(machine(rank, "studio-0" + (rank + 1), memoryGb[rank], Map.of()));
        }
        return new RuntimeCluster("llm-a", new InferenceSettings(null, InferenceSettings.Parallelism.TENSOR, 8080, "llama.cpp", settings), machines,
                Optional.empty(), Optional.empty(), List.of());
    }

    static RuntimeCluster.Machine machine(int rank, String name, int memoryGb, Map<String, String> thunderbolt) {
        return new RuntimeCluster.Machine(rank, name, SshTarget.of(name, "10.0.0." + (rank + 1), "admin", io.macfleet.secrets.SecretReference.of("env:MACFLEET_NONE")),
                "10.0.0." + (rank + 1), memoryGb, thunderbolt);
    }
}
