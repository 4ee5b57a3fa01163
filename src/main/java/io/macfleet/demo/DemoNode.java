package io.macfleet.demo;

import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.NodeRelease;
import io.macfleet.deployment.NodeService;

import io.macfleet.runtime.NodeCommand;
import io.macfleet.command.Actors;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.SshSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What `macfleet demo` does at the end of its start: a small model generated with the node's own make-model (the tiny
 * preset in F32: 4 query heads and 2 KV heads, so 4 tensor-parallel ranks hold one query head each and share KV heads)
 * and deployed to the simulated Macs, which run the real node jar as their launch daemons.
 */
public final class DemoNode {
    /** Where the demo keeps its generated model (the demo inventory names it as the cluster's inference.model). */
    public static Path model(Path demoDirectory) {
        return demoDirectory.resolve("models").resolve("macfleet-tiny-f32.gguf");
    }

    /** The demo model's name in the catalogue: the demo inventory's inference.model names it. */
    public static final String CATALOGUE_NAME = "macfleet-tiny";

    private DemoNode() {
    }

    /** Deploys the node to the demo cluster by the model's catalogue name, after adding the generated model to the catalogue. */
    public static Optional<String> deploy(NodeService nodes, io.macfleet.models.ModelCatalogue catalogue, String cluster, Path demoDirectory,
                                          PrintWriter out) {
        try {
            catalogued(catalogue, demoDirectory, out);
        } catch (IOException | RuntimeException e) {
            out.println("The inference node was not deployed: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            out.println();
            out.flush();
            return Optional.empty();
        }
        return deploy(nodes, cluster, demoDirectory, out, Optional.of(CATALOGUE_NAME));
    }

    /** The demo's model, generated if needed, in the catalogue under {@link #CATALOGUE_NAME}; returns its verified file. */
    public static Path catalogued(io.macfleet.models.ModelCatalogue catalogue, Path demoDirectory, PrintWriter out) throws IOException {
        Path generated = ensureModel(demoDirectory, out);
        io.macfleet.models.CatalogueModel model = catalogue.find(CATALOGUE_NAME).orElse(null);
        if (model == null) {
            out.println("Adding the model to the catalogue as " + CATALOGUE_NAME + " ...");
            out.flush();
            model = catalogue.add(CATALOGUE_NAME, generated.toString(), Optional.empty(), Optional.empty(), Actors.DEMO,
                    io.macfleet.models.HuggingFaceHub.Progress.NONE);
        }
        return catalogue.weights(model);
    }

    /** Deploys the node to the demo cluster and returns its endpoint; prints why not (and returns empty) when it cannot. */
    public static Optional<String> deploy(NodeService nodes, String cluster, Path demoDirectory, PrintWriter out) {
        return deploy(nodes, cluster, demoDirectory, out, Optional.empty());
    }

    private static Optional<String> deploy(NodeService nodes, String cluster, Path demoDirectory, PrintWriter out, Optional<String> catalogueName) {
        try {
            Path jar = NodeService.defaultNodeJar();
            Path model = model(demoDirectory);
            if (catalogueName.isEmpty() && !Files.isRegularFile(model)) {
                out.println("Generating a small model for the inference node (" + model + ") ...");
                out.flush();
                makeModel(jar, model);
            }
            NodeRelease release = catalogueName.isPresent()
                    ? nodes.release(cluster, new NodeService.Request(catalogueName, Optional.empty(), Optional.empty(), Optional.of(jar)))
                    : NodeRelease.of(jar, model);
            NodeDeployer.Plan plan = nodes.plan(cluster, release);
            out.println("Deploying the inference node (tensor parallel across " + plan.ranks().size() + " simulated Macs) ...");
            out.flush();
            SshSettings settings = SshSettings.defaults(Actors.DEMO)
                    .withLimits(ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofSeconds(60)));
            NodeDeployer.Outcome outcome = nodes.deploy(cluster, release, settings, new NodeCommand.ProgressPrinter(out, plan));
            out.println(outcome.summary());
            out.println();
            Path apiKey = nodes.keys(cluster).apiKeyFile();
            out.println("Inference endpoint (OpenAI-compatible): " + outcome.endpoint() + " (API key in " + apiKey + ", mode 600)");
            out.println("  curl -s " + outcome.endpoint() + "/chat/completions -H \"Authorization: Bearer $(cat " + apiKey + ")\" \\");
            out.println("    -H 'Content-Type: application/json' \\");
            out.println("    -d '{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":16}'");
            out.println();
            out.flush();
            return Optional.of(outcome.endpoint());
        } catch (IOException | RuntimeException e) {
            out.println("The inference node was not deployed: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            out.println();
            out.flush();
            return Optional.empty();
        }
    }

    /** The demo's model, generated with the node's make-model when it is not there yet (the llama.cpp demo serves it too). */
    public static Path ensureModel(Path demoDirectory, PrintWriter out) throws IOException {
        Path model = model(demoDirectory);
        if (!Files.isRegularFile(model)) {
            out.println("Generating a small model (" + model + ") ...");
            out.flush();
            makeModel(NodeService.defaultNodeJar(), model);
        }
        return model;
    }

    private static void makeModel(Path jar, Path model) throws IOException {
        Files.createDirectories(model.getParent());
        Path partial = model.resolveSibling(model.getFileName() + ".partial");
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString(),
                "make-model", "--preset", "tiny", "--type", "f32", "--out", partial.toString()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        try {
            if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IOException("make-model failed: " + output.strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while making the model", e);
        }
        Files.move(partial, model, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
}
