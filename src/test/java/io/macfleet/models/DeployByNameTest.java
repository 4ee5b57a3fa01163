package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.demo.DemoNode;
import io.macfleet.deployment.NodeJars;
import io.macfleet.deployment.NodeRelease;
import io.macfleet.deployment.NodeService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * `node deploy` with a model named, not pathed: the inventory's inference.model and --model name a catalogue entry,
 * resolved to the catalogue's verified file; an unknown name and a model that does not fit are refused; paths still work.
 */
@QuarkusTest
class DeployByNameTest {

    @Inject
    NodeService nodes;

    @Inject
    ModelCatalogue catalogue;

    @Inject
    DesiredStateStore store;

    @Test
    void aNameResolvesToTheCatalogueFileAndIsCheckedAgainstTheClustersMemory() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-deploy-by-name");
        String name = "named-" + ProcessHandle.current().pid();
        Path source = TestModels.gguf(directory.resolve("named.gguf"), 15, 10_000, 31);
        CatalogueModel model = catalogue.add(name, source.toString(), Optional.empty(), Optional.empty(), "test", HuggingFaceHub.Progress.NONE);
        Path catalogued = catalogue.localFile(model, model.files().getFirst());
        Optional<Path> jar = Optional.of(NodeJars.nodeJar());

        apply(directory.resolve("fits"), "model: " + name);
        NodeRelease fromInventory = nodes.release("llm-a", new NodeService.Request(Optional.empty(), Optional.empty(), Optional.empty(), jar));
        assertThat(fromInventory.modelFile()).contains(catalogued);
        assertThat(fromInventory.modelSha256()).isEqualTo(model.files().getFirst().sha256());
        NodeRelease fromOption = nodes.release("llm-a", new NodeService.Request(Optional.of(name), Optional.empty(), Optional.empty(), jar));
        assertThat(fromOption.modelFile()).contains(catalogued);
        NodeRelease fromPath = nodes.release("llm-a", new NodeService.Request(Optional.of(source.toString()), Optional.empty(), Optional.empty(), jar));
        assertThat(fromPath.modelFile()).contains(source);
        // The release carries the catalogue's name to node deploy's fan-out; a path is no catalogue model.
        assertThat(fromInventory.catalogueName()).contains(name);
        assertThat(fromOption.catalogueName()).contains(name);
        assertThat(fromPath.catalogueName()).isEmpty();

        assertThatThrownBy(() -> nodes.release("llm-a", new NodeService.Request(Optional.of("no-such-model"), Optional.empty(), Optional.empty(), jar)))
                .isInstanceOf(NodeService.RefusedException.class)
                .hasMessageStartingWith("no model named no-such-model in the catalogue (macfleet model list), and model no-such-model is not a GGUF"
                        + " model file in the models directory");
        // No existence oracle: a word naming a file that exists here (the build file in the working directory) is refused
        // in the same words as one that names nothing.
        assertThat(Files.exists(Path.of("control-plane.xml"))).isTrue();
        String existing = refusal(() -> nodes.release("llm-a", new NodeService.Request(Optional.of("control-plane.xml"), Optional.empty(),
                Optional.empty(), jar)));
        String missing = refusal(() -> nodes.release("llm-a", new NodeService.Request(Optional.of("control-plane.xmm"), Optional.empty(),
                Optional.empty(), jar)));
        assertThat(existing.replace("control-plane.xml", "WORD")).isEqualTo(missing.replace("control-plane.xmm", "WORD"));

        // 1M tokens x 64 slots x 128 KiB of KV cache = 8192 GiB: studio-03 holds 256/1536 of it, 1365.33 GiB, and may wire 192.
        apply(directory.resolve("too-long"), "model: " + name + "\n      runtime: llama.cpp\n      settings:\n        context: 1048576\n        parallel: 64");
        assertThatThrownBy(() -> nodes.release("llm-a", new NodeService.Request(Optional.empty(), Optional.empty(), Optional.empty(), jar)))
                .isInstanceOf(NodeService.RefusedException.class)
                .hasMessageContaining("on cluster llm-a, context 1048576 x 64 slot(s): does not fit")
                .hasMessageContaining("studio-03: needs 1365.33 GiB (weights 0.00 GiB + KV cache 1365.33 GiB) of 192.00 GiB usable");
        catalogue.remove(name, "test");
    }

    @Test
    void theDemoAddsItsGeneratedModelOnceAndDeploysItByName() throws Exception {
        Path demo = Files.createTempDirectory("macfleet-demo-catalogue");
        catalogue.remove(DemoNode.CATALOGUE_NAME, "test");
        java.io.StringWriter text = new java.io.StringWriter();
        java.io.PrintWriter out = new java.io.PrintWriter(text, true);
        Path first = DemoNode.catalogued(catalogue, demo, out);
        Path again = DemoNode.catalogued(catalogue, demo, out);
        assertThat(again).isEqualTo(first);
        assertThat(text.toString()).containsOnlyOnce("Adding the model to the catalogue as macfleet-tiny");
        CatalogueModel model = catalogue.find(DemoNode.CATALOGUE_NAME).orElseThrow();
        assertThat(model.architecture()).isEqualTo("llama");
        assertThat(HuggingFaceHub.sha256(first)).isEqualTo(model.files().getFirst().sha256());

        apply(demo.resolve("inventory"), "model: " + DemoNode.CATALOGUE_NAME);
        NodeRelease release = nodes.release("llm-a", new NodeService.Request(Optional.of(DemoNode.CATALOGUE_NAME), Optional.empty(),
                Optional.empty(), Optional.of(NodeJars.nodeJar())));
        assertThat(release.modelFile()).contains(first);
        catalogue.remove(DemoNode.CATALOGUE_NAME, "test");
    }

    private void apply(Path directory, String modelLines) throws Exception {
        ExampleInventory.writeTo(directory, false);
        Path clusters = directory.resolve("clusters.yaml");
        Files.writeString(clusters, Files.readString(clusters).replace("model: /opt/models/Llama-3.3-70B-Instruct-Q8_0.gguf", modelLines));
        store.apply(InventoryLoader.load(directory).inventory(), "test", directory.toString());
    }

    private static String refusal(Runnable release) {
        try {
            release.run();
        } catch (NodeService.RefusedException refused) {
            return refused.getMessage();
        }
        throw new AssertionError("not refused");
    }
}
