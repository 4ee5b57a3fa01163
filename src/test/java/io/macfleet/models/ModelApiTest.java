package io.macfleet.models;

import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;

import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** /api/v1/models: list, show, add from the source directory, fit, delete; roles and problem answers. */
@QuarkusTest
@TestProfile(ModelApiTest.SourceDirectory.class)
class ModelApiTest {

    /** One directory per test JVM, the same for the profile and the test whatever their class loaders. */
    static final Path SOURCES = Path.of(System.getProperty("java.io.tmpdir"), "macfleet-models-api-" + ProcessHandle.current().pid());

    public static class SourceDirectory implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("macfleet.models.source-directory", SOURCES.toString());
        }
    }

    @Inject
    DesiredStateStore store;

    @Test
    void addListShowFitAndRemoveWithRolesAndProblems() throws Exception {
        Path inventory = Files.createTempDirectory("macfleet-models-api-inventory");
        ExampleInventory.writeTo(inventory, false);
        store.apply(InventoryLoader.load(inventory).inventory(), "api-test", inventory.toString());
        Files.createDirectories(SOURCES);
        TestModels.gguf(SOURCES.resolve("api-model.gguf"), 15, 20_000, 11);
        Files.writeString(SOURCES.resolve("readme.gguf"), "not weights");
        Path outside = Files.createTempFile("macfleet-outside", ".gguf");

        String body = "{\"name\": \"api-model\", \"source\": \"api-model.gguf\"}";
        viewer().contentType("application/json").body(body).when().post("/api/v1/models").then().statusCode(403);
        operator().contentType("application/json").body(body).when().post("/api/v1/models").then().statusCode(201)
                .header("Location", containsString("/api/v1/models/api-model"))
                .body("name", equalTo("api-model")).body("format", equalTo("gguf")).body("architecture", equalTo("llama"))
                .body("quantization", equalTo("Q4_K_M")).body("runtimes", hasItem("llama.cpp"))
                .body("files[0].path", equalTo("api-model.gguf")).body("files[0].sha256", equalTo(HubStandIn.sha256(
                        Files.readAllBytes(SOURCES.resolve("api-model.gguf")))));
        operator().contentType("application/json").body(body).when().post("/api/v1/models").then().statusCode(409)
                .contentType("application/problem+json").body("detail", equalTo("model api-model is already in the catalogue (remove it first)"));
        operator().contentType("application/json").body("{\"name\": \"readme\", \"source\": \"readme.gguf\"}").when().post("/api/v1/models")
                .then().statusCode(400).contentType("application/problem+json")
                .body("detail", equalTo("not a model: " + SOURCES.toRealPath().resolve("readme.gguf") + " does not start with the GGUF magic"));
        operator().contentType("application/json").body("{\"name\": \"outside\", \"source\": \"" + outside + "\"}").when().post("/api/v1/models")
                .then().statusCode(400).contentType("application/problem+json").body("detail", containsString("is outside the models source directory"));
        operator().contentType("application/json").body("{\"name\": \"up\", \"source\": \"../" + outside.getFileName() + "\"}").when()
                .post("/api/v1/models").then().statusCode(400).body("detail", containsString("is outside the models source directory"));
        operator().contentType("application/json").body("{\"name\": \"via\", \"source\": \"hf:a/b@main\", \"via\": \"studio-99\"}").when()
                .post("/api/v1/models").then().statusCode(400).contentType("application/problem+json")
                .body("detail", equalTo("--via studio-99: no machine named 'studio-99' in the applied inventory"));
        operator().contentType("application/json").body("{\"name\": \"x/y\", \"source\": \"api-model.gguf\"}").when().post("/api/v1/models")
                .then().statusCode(400).body("detail", containsString("bad model name"));

        viewer().when().get("/api/v1/models").then().statusCode(200).body("name", hasItem("api-model")).body("name", not(hasItem("readme")));
        viewer().when().get("/api/v1/models/api-model").then().statusCode(200).body("totalBytes", equalTo((int) Files.size(SOURCES.resolve("api-model.gguf"))));
        viewer().when().get("/api/v1/models/nope").then().statusCode(404).contentType("application/problem+json")
                .body("detail", equalTo("no model named 'nope' in the catalogue"));

        viewer().queryParam("cluster", "llm-a").when().get("/api/v1/models/api-model/fit").then().statusCode(200)
                .body("fits", equalTo(true)).body("machines[0].machine", equalTo("studio-01"))
                .body("machines[0].usableFrom", equalTo("default 75 % of 512.00 GiB from the inventory's memoryGb (iogpu.wired_limit_mb not gathered)"));
        viewer().queryParam("cluster", "llm-x").when().get("/api/v1/models/api-model/fit").then().statusCode(404)
                .body("detail", equalTo("no cluster llm-x in the applied inventory"));
        viewer().when().get("/api/v1/models/api-model/fit").then().statusCode(400);

        viewer().when().delete("/api/v1/models/api-model").then().statusCode(403);
        operator().when().delete("/api/v1/models/api-model").then().statusCode(204);
        operator().when().delete("/api/v1/models/api-model").then().statusCode(404);
        viewer().when().get("/api/v1/models").then().statusCode(200).body("name", not(hasItem("api-model")));
    }
}
