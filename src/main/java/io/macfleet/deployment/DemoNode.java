package io.macfleet.deployment;

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

    private DemoNode() {
    }

    /** Deploys the node to the demo cluster and returns its endpoint; prints why not (and returns empty) when it cannot. */
    public static Optional<String> deploy(NodeService nodes, String cluster, Path demoDirectory, PrintWriter out) {
        try {
            Path jar = NodeService.defaultNodeJar();
            Path model = model(demoDirectory);
            if (!Files.isRegularFile(model)) {
                out.println("Generating a small model for the inference node (" + model + ") ...");
                out.flush();
                makeModel(jar, model);
            }
            NodeRelease release = NodeRelease.of(jar, model);
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
