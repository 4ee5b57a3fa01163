package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.models.placement.PlacedFile;
import io.macfleet.models.placement.PlacementReport;
import io.macfleet.models.placement.PlacementStore;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.Test;

/** The console's Models page: what a viewer sees, what an operator may do, refusals. */
@QuarkusTest
class ModelsConsoleTest {

    @Inject
    ModelCatalogue catalogue;

    @Test
    void viewersSeeTheCatalogueOperatorsRemoveAndBadInputIsRefused() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-models-console");
        String name = "console-" + ProcessHandle.current().pid();
        Path source = TestModels.gguf(directory.resolve("console.gguf"), 15, 4096, 21);
        CatalogueModel model = catalogue.add(name, source.toString(), Optional.empty(), Optional.empty(), "console-test",
                HuggingFaceHub.Progress.NONE);

        TestAccounts.Session viewer = TestAccounts.login(Role.VIEWER);
        String html = viewer.request().get("/console/models").then().statusCode(200).extract().body().asString();
        Document page = Jsoup.parse(html);
        assertThat(page.select("nav a[aria-current=page]").text()).isEqualTo("Models");
        assertThat(page.select("tr[data-model=" + name + "] td").eachText()).contains("gguf", "llama", "Q4_K_M", "bundled, llama.cpp");
        assertThat(page.select("#files-" + name + " code").text()).isEqualTo(model.files().getFirst().sha256());
        assertThat(page.select("#add-model")).isEmpty();
        assertThat(page.select("tr[data-model=" + name + "] button")).isEmpty();
        viewer.request().formParam("_csrf", viewer.csrfToken()).post("/console/models/" + name + "/remove").then().statusCode(403);

        TestAccounts.Session operator = TestAccounts.login(Role.OPERATOR);
        Document operatorPage = Jsoup.parse(operator.request().get("/console/models").then().statusCode(200).extract().body().asString());
        assertThat(operatorPage.select("#add-model")).hasSize(1);
        operator.withoutCsrf().formParam("name", "x").formParam("source", "hf:a/b@main").post("/console/models").then().statusCode(403);
        String refused = operator.request().formParam("_csrf", operator.csrfToken()).formParam("name", "local")
                .formParam("source", source.toString()).post("/console/models").then().statusCode(400).extract().body().asString();
        assertThat(Jsoup.parse(refused).text()).contains("The console adds from a Hugging Face repository");
        operator.request().formParam("_csrf", operator.csrfToken()).post("/console/models/" + name + "/remove").then().statusCode(303);
        assertThat(catalogue.find(name)).isEmpty();
        operator.request().formParam("_csrf", operator.csrfToken()).post("/console/models/" + name + "/remove").then().statusCode(404);
        Document empty = Jsoup.parse(viewer.request().get("/console/models").then().statusCode(200).extract().body().asString());
        assertThat(empty.select("tr[data-model=" + name + "]")).isEmpty();
    }

    @Inject
    javax.sql.DataSource dataSource;

    @Test
    void thePageShowsWhereAModelIsPlacedAndEachMacsProgressAndOnlyOperatorsStartAPlacement() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-models-console");
        String name = "placed-" + ProcessHandle.current().pid();
        Path source = TestModels.gguf(directory.resolve("placed.gguf"), 15, 4096, 22);
        CatalogueModel model = catalogue.add(name, source.toString(), Optional.empty(), Optional.empty(), "console-test",
                HuggingFaceHub.Progress.NONE);
        PlacementStore store = new PlacementStore(dataSource);
        java.time.Instant now = java.time.Instant.now();
        PlacedFile file = PlacedFile.of(model, model.files().getFirst(), catalogue.localFile(model, model.files().getFirst()));
        store.start(name + "-done", "llm-console", name, "alice", now.minusSeconds(60), model.totalBytes(), java.util.List.of("studio-01", "studio-02"));
        store.finish(name + "-done", name, new PlacementReport("llm-console", java.util.List.of(java.util.List.of("studio-01", "studio-02")),
                java.util.List.of(new PlacementReport.MacOutcome("studio-01", PlacementReport.Kind.PLACED, model.totalBytes(), 0, "placed and verified"),
                        new PlacementReport.MacOutcome("studio-02", PlacementReport.Kind.ALREADY_PRESENT, 0, 0, "already held it (SHA-256 checked)")),
                model.totalBytes(), model.totalBytes(), 1000, 1), java.util.List.of(file), now.minusSeconds(50));
        store.start(name + "-running", "llm-console-2", name, "bob", now, 1000, java.util.List.of("studio-03"));
        store.progress(name + "-running", java.util.Map.of("studio-03", 400L), now);

        TestAccounts.Session viewer = TestAccounts.login(Role.VIEWER);
        Document page = Jsoup.parse(viewer.request().get("/console/models").then().statusCode(200).extract().body().asString());
        assertThat(page.select("tr[data-model=" + name + "] td.placed").text()).isEqualTo("llm-console: studio-01, studio-02");
        assertThat(page.select("#placed-" + name + " tr[data-machine=studio-01] td").eachText()).contains("llm-console", file.remotePath(),
                "placement " + name + "-done");
        assertThat(page.select("section#placements[hx-get=/console/models/placements]")).hasSize(1);
        assertThat(page.select("#place-model")).isEmpty();

        var answer = viewer.request().get("/console/models/placements").then().statusCode(200).extract();
        assertThat(answer.header("Cache-Control")).isEqualTo("no-store");
        Document part = Jsoup.parse(answer.body().asString());
        assertThat(part.select("[data-placement=" + name + "-running]").attr("data-state")).isEqualTo("running");
        assertThat(part.select("[data-placement=" + name + "-running] tr[data-machine=studio-03]").attr("data-percent")).isEqualTo("40");
        assertThat(part.select("[data-placement=" + name + "-done]").attr("data-state")).isEqualTo("done");
        assertThat(part.select("[data-placement=" + name + "-done] tr[data-machine=studio-02] .badge").text()).isEqualTo("already-present");
        viewer.request().formParam("_csrf", viewer.csrfToken()).formParam("model", name).formParam("cluster", "llm-a")
                .post("/console/models/placements").then().statusCode(403);

        TestAccounts.Session operator = TestAccounts.login(Role.OPERATOR);
        Document operatorPage = Jsoup.parse(operator.request().get("/console/models").then().statusCode(200).extract().body().asString());
        assertThat(operatorPage.select("#place-model select[name=model] option[value=" + name + "]")).hasSize(1);
        String refused = operator.request().formParam("_csrf", operator.csrfToken()).formParam("model", name).formParam("cluster", "llm-nope")
                .post("/console/models/placements").then().statusCode(404).extract().body().asString();
        assertThat(Jsoup.parse(refused).text()).containsIgnoringCase("no cluster named 'llm-nope'");
        catalogue.remove(name, "console-test");
    }
}
