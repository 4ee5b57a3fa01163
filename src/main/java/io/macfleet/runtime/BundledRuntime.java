package io.macfleet.runtime;

import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.NodeLayout;
import io.macfleet.deployment.NodeRelease;
import io.macfleet.deployment.NodeService;
import io.macfleet.deployment.RankTarget;
import io.macfleet.runtime.RuntimePlan.DaemonPlan;
import io.macfleet.runtime.RuntimePlan.Listen;
import io.macfleet.runtime.RuntimePlan.MachinePlan;
import io.macfleet.runtime.RuntimePlan.Probe;
import io.macfleet.runtime.RuntimePlan.StagedFile;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The bundled JDK-only inference node: one daemon per Mac, every rank a peer of the mesh. Its deployment is
 * {@link NodeDeployer} as before (resumable copies, the staged switch, {@code node_deployment} rows); this class
 * describes that same plan in the runtime's terms, so {@code node plan} shows it like any other runtime's.
 */
public final class BundledRuntime implements InferenceRuntime {

    public static final String NAME = io.macfleet.inventory.InferenceSettings.BUNDLED;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "the bundled inference node (JDK only, CPU): tensor or pipeline parallel over every Mac of the cluster";
    }

    @Override
    public List<String> labels() {
        return List.of(NodeLayout.LABEL);
    }

    @Override
    public List<Pattern> rdmaFaultLines() {
        return RdmaFaultLines.SIGNATURES;
    }

    /** The node's own plan: what {@link NodeDeployer} carries out. */
    public static NodeDeployer.Plan nodePlan(RuntimeCluster cluster) {
        Optional<java.nio.file.Path> jar = cluster.nodeJar();
        java.nio.file.Path model = cluster.model().orElseThrow(() -> new RuntimeRefused("cluster " + cluster.name()
                + ": no model: give --model FILE.gguf or set inference.model"));
        NodeRelease release;
        try {
            release = NodeRelease.of(jar.orElseGet(NodeService::defaultNodeJar), model);
        } catch (IOException | IllegalArgumentException e) {
            throw new RuntimeRefused("cannot read what to deploy: " + e.getMessage());
        }
        List<RankTarget> ranks = cluster.machines().stream().map(machine -> RankTarget.of(machine.rank(), machine.name(), machine.ssh(),
                machine.managementAddress(), machine.memoryGb(), cluster.inference().port())).toList();
        return NodeService.plan(cluster.name(), cluster.inference().parallelism().yamlName(), ranks, release, cluster.configuredLinks());
    }

    @Override
    public RuntimePlan plan(RuntimeCluster cluster) {
        return describe(nodePlan(cluster));
    }

    /** A node plan in the runtime's terms. */
    public static RuntimePlan describe(NodeDeployer.Plan plan) {
        NodeRelease release = plan.release();
        List<MachinePlan> machines = new ArrayList<>();
        for (RankTarget rank : plan.ranks()) {
            List<StagedFile> files = new ArrayList<>();
            files.add(new StagedFile(release.jarPath(), new StagedFile.Source.LocalFile(release.nodeJar()), Optional.of(release.nodeSha256()),
                    size(release.nodeJar()), 0644));
            release.modelFile().ifPresent(model -> files.add(new StagedFile(release.modelPath(), new StagedFile.Source.LocalFile(model),
                    Optional.of(release.modelSha256()), release.modelSize(), 0644)));
            byte[] clusterFile = plan.clusterFile().getBytes(StandardCharsets.UTF_8);
            files.add(new StagedFile(plan.clusterFilePath(), new StagedFile.Source.LocalFile(java.nio.file.Path.of("(generated cluster file)")),
                    Optional.of(NodeRelease.sha256(clusterFile)), clusterFile.length, 0644));
            plan.keys().ifPresent(keys -> {
                // The cluster's keys, shown by where they go, never by their content or hash.
                files.add(new StagedFile(io.macfleet.deployment.NodeKeys.MESH_KEY_ON_MAC, new StagedFile.Source.Secret("file:" + keys.meshKeyFile()),
                        Optional.empty(), 65, 0600));
                files.add(new StagedFile(io.macfleet.deployment.NodeKeys.API_KEY_ON_MAC, new StagedFile.Source.Secret("file:" + keys.apiKeyFile()),
                        Optional.empty(), 65, 0600));
            });
            // The node listens on the Mac's management address only (NodeDeployer.Plan.daemon), never on every interface.
            String bind = rank.managementAddress();
            URI health = URI.create("http://" + rank.managementAddress() + ":" + rank.httpPort() + "/health");
            machines.add(new MachinePlan(rank.machine(), rank.rank(), rank.rank() == 0 ? "rank 0 (coordinator)" : "rank " + rank.rank(), rank.ssh(),
                    List.of(NodeLayout.NODE_DIRECTORY, NodeLayout.MODEL_DIRECTORY), files,
                    List.of(new DaemonPlan(plan.daemon(rank), 0, List.of(new Listen(bind, rank.httpPort()), new Listen(bind, rank.clusterPort())),
                            new Probe.Http(health)))));
        }
        RankTarget head = plan.coordinator();
        return new RuntimePlan(NAME, plan.cluster(), "node " + release.nodeVersion() + " (" + release.nodeSha256().substring(0, 12) + ")", machines,
                plan.endpoint(), new Probe.Http(URI.create("http://" + head.managementAddress() + ":" + head.httpPort() + "/health")),
                List.of(plan.parallelism() + " parallel over " + plan.ranks().size() + " ranks"));
    }

    private static long size(java.nio.file.Path file) {
        try {
            return java.nio.file.Files.size(file);
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    public Optional<String> metricsPath() {
        return Optional.of("/metrics");
    }

    /** The node's own names (inference-node's server/Metrics.java); its histogram buckets are copied as they are. */
    @Override
    public InferenceCounters inferenceCounters(PrometheusText scraped) {
        java.util.Map<String, Double> requests = new java.util.LinkedHashMap<>();
        java.util.OptionalDouble all = scraped.value("inference_node_requests_total");
        java.util.OptionalDouble rejected = scraped.value("inference_node_requests_rejected_total");
        if (all.isPresent()) {
            requests.put("ok", Math.max(0, all.getAsDouble() - rejected.orElse(0)));
            requests.put("rejected", rejected.orElse(0));
        }
        java.util.Map<String, Double> errors = new java.util.LinkedHashMap<>();
        scraped.all("inference_node_errors_total", labels -> labels.containsKey("kind"))
                .forEach(sample -> errors.merge(sample.labels().get("kind"), sample.value(), Double::sum));
        List<Double> bounds = new java.util.ArrayList<>();
        List<Double> cumulative = new java.util.ArrayList<>();
        for (PrometheusText.Sample bucket : scraped.all("inference_node_time_to_first_token_seconds_bucket", labels -> labels.containsKey("le"))) {
            double bound = Double.parseDouble(bucket.labels().get("le").replace("+Inf", "Infinity"));
            if (Double.isFinite(bound)) {
                bounds.add(bound);
                cumulative.add(bucket.value());
            }
        }
        java.util.OptionalDouble count = scraped.value("inference_node_time_to_first_token_seconds_count");
        InferenceCounters.FirstTokenHistogram firstToken = count.isEmpty() ? null : new InferenceCounters.FirstTokenHistogram(bounds, cumulative,
                scraped.value("inference_node_time_to_first_token_seconds_sum").orElse(0), count.getAsDouble());
        return new InferenceCounters(requests, scraped.value("inference_node_prompt_tokens_total"),
                scraped.value("inference_node_tokens_generated_total"), firstToken, scraped.value("inference_node_requests_waiting"), errors);
    }
}
