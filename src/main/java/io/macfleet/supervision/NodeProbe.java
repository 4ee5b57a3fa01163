package io.macfleet.supervision;

import io.macfleet.deployment.LaunchdService;
import io.macfleet.deployment.RemoteShell;
import io.macfleet.ssh.Command;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Looks at every rank of a cluster at once (one virtual thread per rank): the node's /health and /metrics over
 * HTTP, and over SSH {@code launchctl print}, {@code rdma_ctl status}, {@code ibv_devinfo} (bounded: it hangs when
 * RDMA is wedged) and the tail of the node's log.
 */
public final class NodeProbe implements ClusterProbe {

    /** Lines of the node's log read per look. */
    static final int LOG_LINES = 200;
    /** The RDMA failure signatures ({@link io.macfleet.runtime.RdmaFaultLines}: exo and MLX reports). */
    private static final List<Pattern> RDMA_SIGNATURES = io.macfleet.runtime.RdmaFaultLines.SIGNATURES;

    /** The log lines that mean an RDMA failure of the node (the bundled runtime's RDMA fault lines). */
    public static List<Pattern> rdmaSignatures() {
        return RDMA_SIGNATURES;
    }

    /** The line the node writes when a rank starts (what comes before it is an earlier run's). */
    private static final Pattern START = Pattern.compile("^inference-node: rank \\d+ of \\d+ ");
    private static final Pattern REFUSAL = Pattern.compile("refused this rank \\(\\d+\\): ((node version|model) differs: .*)$");
    private static final Pattern INFO = Pattern.compile("^inference_node_info\\{version=\"((?:[^\"\\\\]|\\\\.)*)\",model=\"((?:[^\"\\\\]|\\\\.)*)\"\\} 1");

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    private final MachineShell shell;
    private final HttpClient http;
    private final Duration httpTimeout;
    private final Duration rdmaTimeout;
    private final Clock clock;
    /** The bearer key for a rank's /metrics (the node serves it behind its API key), by the rank's URI. */
    private final java.util.function.Function<java.net.URI, Optional<String>> metricsKey;

    public NodeProbe(MachineShell shell, Duration httpTimeout, Duration rdmaTimeout, Clock clock) {
        this(shell, httpTimeout, rdmaTimeout, clock, rank -> Optional.empty());
    }

    public NodeProbe(MachineShell shell, Duration httpTimeout, Duration rdmaTimeout, Clock clock,
                     java.util.function.Function<java.net.URI, Optional<String>> metricsKey) {
        this.metricsKey = metricsKey;
        this.shell = shell;
        this.http = HttpClient.newBuilder().connectTimeout(httpTimeout).version(HttpClient.Version.HTTP_1_1).build();
        this.httpTimeout = httpTimeout;
        this.rdmaTimeout = rdmaTimeout;
        this.clock = clock;
    }

    @Override
    public ClusterObservation observe(SupervisedCluster cluster) {
        List<RankObservation> ranks = new ArrayList<>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<RankObservation>> futures = new ArrayList<>();
            for (SupervisedCluster.Rank rank : cluster.ranks()) {
                futures.add(executor.submit(() -> observe(rank)));
            }
            for (Future<RankObservation> future : futures) {
                ranks.add(future.get());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while observing cluster " + cluster.name(), e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("observing cluster " + cluster.name() + " failed: " + e.getCause(), e.getCause());
        }
        return new ClusterObservation(cluster, clock.instant(), ranks);
    }

    RankObservation observe(SupervisedCluster.Rank rank) {
        RankObservation.Health health;
        String detail;
        try {
            HttpResponse<String> answer = get(rank.node().resolve("/health"));
            if (answer.statusCode() == 200) {
                health = RankObservation.Health.SERVING;
                detail = "";
            } else {
                detail = jsonString(answer.body(), "error").orElse(jsonString(answer.body(), "status").orElse("HTTP " + answer.statusCode()));
                String status = jsonString(answer.body(), "status").orElse("");
                health = status.equals("loading") || detail.contains("loading") || detail.contains("forming the cluster")
                        ? RankObservation.Health.STARTING : RankObservation.Health.DEGRADED;
            }
        } catch (IOException e) {
            health = RankObservation.Health.UNREACHABLE;
            detail = "no answer from " + rank.node().resolve("/health") + " (" + e.getClass().getSimpleName() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            health = RankObservation.Health.UNREACHABLE;
            detail = "interrupted";
        }
        Optional<String> version = Optional.empty();
        Optional<String> model = Optional.empty();
        OptionalDouble tokensPerSecond = OptionalDouble.empty();
        OptionalDouble firstToken = OptionalDouble.empty();
        if (health != RankObservation.Health.UNREACHABLE) {
            try {
                HttpRequest.Builder request = HttpRequest.newBuilder(rank.node().resolve("/metrics")).timeout(httpTimeout).GET();
                metricsKey.apply(rank.node()).ifPresent(key -> request.header("Authorization", "Bearer " + key));
                HttpResponse<String> metrics = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                if (metrics.statusCode() == 200) {
                    double ttftSum = Double.NaN;
                    double ttftCount = Double.NaN;
                    for (String line : metrics.body().split("\n")) {
                        Matcher info = INFO.matcher(line);
                        if (info.find()) {
                            version = Optional.of(unescape(info.group(1)));
                            model = Optional.of(unescape(info.group(2)));
                        } else if (line.startsWith("inference_node_decode_tokens_per_second ")) {
                            tokensPerSecond = number(line);
                        } else if (line.startsWith("inference_node_time_to_first_token_seconds_sum ")) {
                            ttftSum = number(line).orElse(Double.NaN);
                        } else if (line.startsWith("inference_node_time_to_first_token_seconds_count ")) {
                            ttftCount = number(line).orElse(Double.NaN);
                        }
                    }
                    if (ttftCount > 0) {
                        firstToken = OptionalDouble.of(ttftSum / ttftCount);
                    }
                }
            } catch (IOException e) {
                // Health answered a moment ago; metrics are for display only.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Optional<LaunchdService> launchd;
        RankObservation.Rdma rdma = RankObservation.Rdma.UNKNOWN;
        String rdmaEvidence = "";
        Optional<String> refusal = Optional.empty();
        try {
            RemoteShell.Answer printed = shell.run(rank.machine(), Command.reading("launchctl", "print", "system/" + rank.daemonLabel()), httpTimeout.multipliedBy(2));
            launchd = Optional.of(LaunchdService.parse(printed.exitStatus(), printed.stdout(), printed.stderr()));
            List<String> log = sinceLastStart(shell.run(rank.machine(), Command.reading("tail", "-n", Integer.toString(LOG_LINES), rank.logPath()), httpTimeout.multipliedBy(2)).stdout());
            refusal = log.stream().map(REFUSAL::matcher).filter(Matcher::find).map(matcher -> matcher.group(1)).reduce((first, second) -> second);
            if (health != RankObservation.Health.SERVING && launchd.get().loaded()
                    && (!launchd.get().state().equals("running") || launchd.get().runs().orElse(1) > 1)) {
                // A rank that does not run says why in its log; every failure message carries its last lines (issue 29).
                List<String> said = log.stream().map(String::strip).filter(line -> !line.isEmpty()).toList();
                if (!said.isEmpty()) {
                    detail = (detail.isBlank() ? "" : detail + "; ") + "its log says: "
                            + String.join(" | ", said.subList(Math.max(0, said.size() - 2), said.size()).stream()
                                    .map(line -> line.length() > 200 ? line.substring(0, 200) + "..." : line).toList());
                }
            }
            RemoteShell.Answer status = shell.run(rank.machine(), Command.reading("rdma_ctl", "status"), httpTimeout.multipliedBy(2));
            Optional<String> signature = health == RankObservation.Health.SERVING ? Optional.empty() : rdmaSignature(log);
            if (!status.stdout().strip().equals("enabled")) {
                rdma = RankObservation.Rdma.NOT_IN_USE;
            } else {
                try {
                    RemoteShell.Answer devinfo = shell.run(rank.machine(), Command.reading("ibv_devinfo"), rdmaTimeout);
                    if (devinfo.exitStatus() != 0 || !devinfo.stdout().contains("hca_id:")) {
                        rdma = RankObservation.Rdma.DEVICES_MISSING;
                        rdmaEvidence = "rdma_ctl says enabled but ibv_devinfo lists no device ("
                                + firstLine(devinfo.stderr().isBlank() ? devinfo.stdout() : devinfo.stderr()) + ")";
                    } else {
                        rdma = RankObservation.Rdma.HEALTHY;
                    }
                } catch (MachineShell.TimedOut e) {
                    rdma = RankObservation.Rdma.NOT_ANSWERING;
                    rdmaEvidence = "ibv_devinfo did not answer within " + rdmaTimeout.toSeconds() + " s";
                }
            }
            if (signature.isPresent() && (rdma == RankObservation.Rdma.HEALTHY || rdma == RankObservation.Rdma.NOT_IN_USE)) {
                rdma = RankObservation.Rdma.FAILURE_IN_LOG;
                rdmaEvidence = "the node's log says \"" + signature.get() + "\"";
            } else if (signature.isPresent()) {
                rdmaEvidence += "; the node's log says \"" + signature.get() + "\"";
            }
        } catch (IOException e) {
            launchd = Optional.empty();
            if (health != RankObservation.Health.SERVING) {
                detail = (detail.isBlank() ? "" : detail + "; ") + "SSH: " + e.getMessage();
            }
        }
        return new RankObservation(rank.rank(), rank.machine(), health, detail, launchd, version, model, rdma, rdmaEvidence,
                refusal, tokensPerSecond, firstToken);
    }

    /** The lines of the current run: from the last start line on (earlier runs' errors are history). */
    static List<String> sinceLastStart(String tail) {
        List<String> lines = List.of(tail.split("\n"));
        int start = 0;
        for (int index = 0; index < lines.size(); index++) {
            if (START.matcher(lines.get(index)).find()) {
                start = index;
            }
        }
        return lines.subList(start, lines.size());
    }

    static Optional<String> rdmaSignature(List<String> lines) {
        for (int index = lines.size() - 1; index >= 0; index--) {
            for (Pattern signature : RDMA_SIGNATURES) {
                Matcher matcher = signature.matcher(lines.get(index));
                if (matcher.find()) {
                    return Optional.of(lines.get(index).strip());
                }
            }
        }
        return Optional.empty();
    }

    private HttpResponse<String> get(URI uri) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri).timeout(httpTimeout).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Optional<String> jsonString(String body, String field) {
        try {
            com.fasterxml.jackson.databind.JsonNode value = JSON.readTree(body).path(field);
            return value.isTextual() ? Optional.of(value.asText()) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static String unescape(String value) {
        return value.replace("\\\"", "\"").replace("\\n", "\n").replace("\\\\", "\\");
    }

    private static OptionalDouble number(String line) {
        try {
            return OptionalDouble.of(Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
        } catch (NumberFormatException e) {
            return OptionalDouble.empty();
        }
    }

    private static String firstLine(String text) {
        String stripped = text.strip();
        int newline = stripped.indexOf('\n');
        return newline < 0 ? stripped : stripped.substring(0, newline);
    }
}
