package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
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
}
