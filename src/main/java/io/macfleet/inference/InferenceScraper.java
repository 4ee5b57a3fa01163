package io.macfleet.inference;

import io.macfleet.config.MacfleetConfig;
import io.macfleet.health.MacHealth;
import io.macfleet.health.MacHealthService;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InferenceSettings;
import io.macfleet.inventory.Machine;
import io.macfleet.deployment.NodeService;
import io.macfleet.runtime.BundledRuntime;
import io.macfleet.runtime.InferenceRuntime;
import io.macfleet.runtime.PrometheusText;
import io.macfleet.runtime.RuntimeService;
import io.macfleet.secrets.SecretReference;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * Every {@code macfleet.metrics.inference-interval}, scrapes each cluster's runtime where its
 * {@link InferenceRuntime#metricsPath()} says (with the cluster's API key) and feeds {@link InferenceMetrics}. A
 * runtime without metrics (MLX: mlx_lm.server has no /metrics) is exported as
 * {@code macfleet_inference_metrics_available{runtime="mlx"} 0} and nothing else.
 */
@ApplicationScoped
@jakarta.inject.Named("inferenceEnergy") // the cluster page's line: {inject:inferenceEnergy.describe(name)}
public class InferenceScraper {

    private static final Logger LOG = Logger.getLogger(InferenceScraper.class);

    private final MacfleetConfig.Metrics settings;
    private final DesiredStateStore desiredState;
    private final RuntimeService runtimes;
    private final NodeService nodes;
    private final MacHealthService health;
    private final InferenceMetrics metrics;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).version(HttpClient.Version.HTTP_1_1).build();
    private final Clock clock = Clock.systemUTC();

    @Inject
    public InferenceScraper(MacfleetConfig config, DesiredStateStore desiredState, RuntimeService runtimes, NodeService nodes,
                            MacHealthService health, MeterRegistry registry) {
        this.settings = config.metrics();
        this.desiredState = desiredState;
        this.runtimes = runtimes;
        this.nodes = nodes;
        this.health = health;
        this.metrics = new InferenceMetrics(registry, this::clusterPowerWatts);
    }

    @Scheduled(every = "{macfleet.metrics.inference-interval}", delayed = "10s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        if (!settings.enabled()) {
            return;
        }
        try {
            scrape();
        } catch (RuntimeException e) {
            LOG.warnf("inference metrics not scraped: %s", e.toString());
        }
    }

    /** Scrapes every cluster with an inference section now. */
    public synchronized void scrape() {
        Set<String> names = new HashSet<>();
        for (Cluster cluster : desiredState.clusters()) {
            InferenceSettings inference = cluster.inference();
            if (inference == null) {
                continue;
            }
            names.add(cluster.name());
            String runtimeName = inference.runtime() == null ? BundledRuntime.NAME : inference.runtime();
            try {
                InferenceRuntime runtime = runtimes.runtimeOf(cluster.name());
                if (runtime instanceof BundledRuntime && !nodes.deployments().latest(cluster.name())
                        .map(io.macfleet.deployment.NodeDeploymentStore.Deployment::finished).orElse(false)) {
                    // Not deployed (or a deployment under way): nothing to ask, and its keys are not made here.
                    metrics.unavailable(cluster.name(), runtimeName);
                    continue;
                }
                Optional<String> path = runtime.metricsPath();
                if (path.isEmpty()) {
                    metrics.unavailable(cluster.name(), runtimeName);
                    continue;
                }
                URI uri = metricsUri(runtimes.endpoint(cluster.name()), path.get());
                metrics.record(cluster.name(), runtimeName, fetch(http, runtime, uri, apiKey(cluster, runtime)), clock.instant());
            } catch (IOException | RuntimeException e) {
                LOG.debugf("metrics of cluster %s not scraped: %s", cluster.name(), e.toString());
                metrics.unavailable(cluster.name(), runtimeName);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        metrics.retain(names);
    }

    /** The metrics address on the server of an OpenAI endpoint ({@code http://host:port/v1} and {@code /metrics}). */
    public static URI metricsUri(String endpoint, String path) {
        return URI.create(endpoint.replaceFirst("/v1/?$", "") + path);
    }

    /** One scrape: GET with the bearer key, the answer in macfleet's terms; anything but 200 is an IOException naming it. */
    public static io.macfleet.runtime.InferenceCounters fetch(HttpClient http, InferenceRuntime runtime, URI uri, Optional<String> apiKey)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET();
        apiKey.ifPresent(key -> request.header("Authorization", "Bearer " + key));
        HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException("HTTP " + answer.statusCode() + " from " + uri);
        }
        return runtime.inferenceCounters(PrometheusText.parse(answer.body()));
    }

    public OptionalDouble tokensPerSecond(String cluster) {
        return metrics.tokensPerSecond(cluster);
    }

    /** Joules per generated token of the cluster, when it generates and every Mac's package power is known. */
    public OptionalDouble joulesPerToken(String cluster) {
        return metrics.joulesPerToken(cluster);
    }

    /** The cluster page's sentence on energy per token, e.g. "2.9 J per token (118 W at 40.5 tokens/s)". */
    public String describe(String cluster) {
        OptionalDouble rate = tokensPerSecond(cluster);
        if (rate.isEmpty()) {
            return "unknown: no tokens-per-second figure from the runtime yet";
        }
        if (rate.getAsDouble() <= 0) {
            return "not generating now (0 tokens/s)";
        }
        double watts = clusterPowerWatts(cluster);
        if (Double.isNaN(watts)) {
            return "unknown: not every Mac's package power is known yet (" + String.format(java.util.Locale.ROOT, "%.1f", rate.getAsDouble()) + " tokens/s)";
        }
        return String.format(java.util.Locale.ROOT, "%.2f J per token (%.0f W at %.1f tokens/s)", watts / rate.getAsDouble(), watts, rate.getAsDouble());
    }

    /** The bundled node's key lives under macfleet's home; other runtimes name theirs in inference.settings.apiKey. */
    private Optional<String> apiKey(Cluster cluster, InferenceRuntime runtime) throws IOException {
        if (runtime instanceof BundledRuntime) {
            java.nio.file.Path file = nodes.keys(cluster.name()).apiKeyFile();
            return Files.isRegularFile(file) ? Optional.of(Files.readString(file).strip()) : Optional.empty();
        }
        Object reference = cluster.inference().settings() == null ? null : cluster.inference().settings().get("apiKey");
        return reference instanceof String text ? Optional.of(SecretReference.of(text).resolve(System.getenv()).strip()) : Optional.empty();
    }

    private double clusterPowerWatts(String cluster) {
        List<Machine> machines = desiredState.machines(cluster);
        double watts = 0;
        for (Machine machine : machines) {
            OptionalDouble power = health.latest(machine.name()).map(MacHealth::packagePowerWatts).orElse(OptionalDouble.empty());
            if (power.isEmpty()) {
                return Double.NaN;
            }
            watts += power.getAsDouble();
        }
        return machines.isEmpty() ? Double.NaN : watts;
    }
}
