package io.macfleet.deployment;

import io.macfleet.runtime.NodeResource;
import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.api.JsonShape;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** REST: a cluster's node state read from simulated Macs, and what a deploy request is refused for. */
@QuarkusTest
class NodeApiTest {

    static SimulatedInventory simulation;

    @Inject
    DesiredStateStore store;

    /** The service's own mapper (with every customizer), the one the answers are written with. */
    @Inject
    ObjectMapper mapper;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-node-api"), 2, "127.0.0.71");
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @BeforeEach
    void apply() throws Exception {
        Path inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-n", List.of("studio-01", "studio-02"))), Map.of());
        store.apply(InventoryLoader.load(inventory).inventory(), "node-api-test", inventory.toString());
    }

    @Test
    void statusOfAClusterWithoutTheNodeReadsEveryRankFromItsMac() {
        String answer = viewer().when().get("/api/v1/clusters/llm-n/node").then().log().ifValidationFails().statusCode(200)
                .body("cluster", equalTo("llm-n"))
                .body("serving", equalTo(false))
                .body("ranks", hasSize(2))
                .body("ranks[0].machine", equalTo("studio-01"))
                .body("ranks[0].state", equalTo("not deployed"))
                .body("ranks[1].rank", equalTo(1))
                .body("runtime", equalTo("bundled"))
                .body("endpoint", org.hamcrest.Matchers.matchesPattern("http://127\\.[0-9.]+:[0-9]+/v1"))
                .extract().asString();
        // The whole shape: nothing deployed yet, so no lastDeployment, and a rank without pid, runs, hashes or error
        // leaves them out (not null); the runtime and its endpoint are always named.
        assertThat(JsonShape.fieldNames(answer, "")).containsExactly("cluster", "serving", "ranks", "runtime", "endpoint");
        assertThat(JsonShape.fieldNames(answer, "/ranks/0")).containsExactly("rank", "machine", "state", "lastExit");
        viewer().when().get("/api/v1/clusters/llm-nope/node").then().statusCode(404)
                .body("detail", containsString("no cluster named 'llm-nope'"));
    }

    @Test
    void aRankThatReadsEverythingSendsEveryFieldInOrderAndOneThatReadsNothingLeavesThemOut() throws Exception {
        NodeResource.RankBody everything = new NodeResource.RankBody(0, "studio-01", "running", 4242L, 3, "never exited", "0.3.0",
                "a".repeat(64), "b".repeat(64), null);
        NodeResource.RankBody unreachable = new NodeResource.RankBody(1, "studio-02", "unreachable", null, null, "never exited", null, null, null,
                "studio-02: connection refused");
        NodeResource.NodeStatusBody status = new NodeResource.NodeStatusBody("llm-n", true, List.of(everything, unreachable),
                new NodeResource.LastDeploymentBody(7, "done", "", "0.3.0", "b".repeat(64)));

        assertThat(mapper.writeValueAsString(status)).isEqualTo("{\"cluster\":\"llm-n\",\"serving\":true,\"ranks\":["
                + "{\"rank\":0,\"machine\":\"studio-01\",\"state\":\"running\",\"pid\":4242,\"runs\":3,\"lastExit\":\"never exited\","
                + "\"nodeVersion\":\"0.3.0\",\"nodeSha256\":\"" + "a".repeat(64) + "\",\"modelSha256\":\"" + "b".repeat(64) + "\"},"
                + "{\"rank\":1,\"machine\":\"studio-02\",\"state\":\"unreachable\",\"lastExit\":\"never exited\","
                + "\"error\":\"studio-02: connection refused\"}],"
                + "\"lastDeployment\":{\"id\":7,\"phase\":\"done\",\"message\":\"\",\"nodeVersion\":\"0.3.0\",\"modelSha256\":\"" + "b".repeat(64) + "\"}}");
        assertThat(mapper.writeValueAsString(new NodeResource.DeployStartedBody("llm-n", "0.3.0", "tiny.gguf")))
                .isEqualTo("{\"cluster\":\"llm-n\",\"nodeVersion\":\"0.3.0\",\"model\":\"tiny.gguf\"}");
        assertThat(mapper.writeValueAsString(new NodeResource.RestartBody("llm-n", List.of("studio-01: restarted"))))
                .isEqualTo("{\"cluster\":\"llm-n\",\"machines\":[\"studio-01: restarted\"]}");
    }

    @Test
    void deployRequestsAreForOperatorsAndNeedAModelTheServerCanRead() throws Exception {
        viewer().contentType("application/json").body("{}").when().post("/api/v1/clusters/llm-n/node/deploy").then().statusCode(403);
        operator().contentType("application/json").body("{\"model\":\"models/tiny.gguf\"}").when().post("/api/v1/clusters/llm-n/node/deploy")
                .then().statusCode(400).body("detail", containsString("'model' must be an absolute path"));
        // A missing file, a directory and a file that is not a model (the probe sent a password file to every Mac)
        // are refused alike: the answer tells nothing of what the path is on the server's host.
        java.nio.file.Path secret = java.nio.file.Files.createTempFile("volume-owner-password", "");
        java.nio.file.Files.writeString(secret, "hunter2-hunter2\n");
        // A model outside the models directory (the tests' is the temporary directory) is refused alike, named
        // directly, through '..' or through a symbolic link inside the directory that leads out of it.
        // Not under the checkout: CI clones it into /tmp, which is the tests' models directory. The user's cache is
        // where the llama.cpp build is kept too.
        java.nio.file.Path outsideDirectory = java.nio.file.Files.createDirectories(java.nio.file.Path.of(System.getProperty("user.home"),
                ".cache", "macfleet", "test-not-models").toAbsolutePath());
        org.assertj.core.api.Assertions.assertThat(outsideDirectory.toRealPath().startsWith(java.nio.file.Path.of(System.getProperty("java.io.tmpdir"))
                .toRealPath())).as("the outside directory must be outside the models directory").isFalse();
        java.nio.file.Path outside = java.nio.file.Files.write(outsideDirectory.resolve("looks-like.gguf"), "GGUF and then some".getBytes());
        java.nio.file.Path link = secret.resolveSibling(secret.getFileName() + "-link.gguf");
        java.nio.file.Files.deleteIfExists(link);
        java.nio.file.Files.createSymbolicLink(link, outside);
        String models = java.nio.file.Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().normalize().toString();
        for (String path : List.of("/nonexistent/tiny.gguf", secret.getParent().toString(), secret.toString(), outside.toString(), link.toString(),
                models + "/.." + outside)) {
            operator().contentType("application/json").body("{\"model\":\"" + path + "\"}").when().post("/api/v1/clusters/llm-n/node/deploy")
                    .then().statusCode(400).body("detail", org.hamcrest.Matchers.equalTo("no model named " + path + " in the catalogue (macfleet model list), and model "
                            + path + " is not a GGUF model file in the models directory " + models
                            + " (macfleet.models.directory): copy the model there and name it by that path"));
        }
        // A request never makes the Macs fetch an address of its choosing.
        operator().contentType("application/json").body("{\"model\":\"http://10.9.9.9/evil.gguf\",\"modelSha256\":\"" + "a".repeat(64)
                        + "\",\"modelSize\":10}").when().post("/api/v1/clusters/llm-n/node/deploy")
                .then().statusCode(400).body("detail", containsString("the API does not deploy from URLs"));
        operator().contentType("application/json").body("{}").when().post("/api/v1/clusters/llm-n/node/deploy")
                .then().statusCode(400).body("detail", containsString("no --model given and cluster llm-n names no inference.model"));
    }
}
