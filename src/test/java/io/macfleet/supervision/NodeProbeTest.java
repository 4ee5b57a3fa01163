package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.macfleet.deployment.RemoteShell;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The probe against a node's HTTP answers (its real formats) and a scripted shell: what each answer becomes. */
class NodeProbeTest {

    HttpServer node;
    volatile int healthStatus = 200;
    volatile String healthBody = "{\"status\":\"ok\",\"rank\":1}";
    final Map<String, RemoteShell.Answer> answers = new ConcurrentHashMap<>();
    volatile boolean devinfoHangs;

    @BeforeEach
    void start() throws IOException {
        node = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        node.createContext("/health", exchange -> reply(exchange, healthStatus, healthBody));
        node.createContext("/metrics", exchange -> reply(exchange, 200, """
                # TYPE inference_node_cluster_rank gauge
                inference_node_cluster_rank 1
                # HELP inference_node_info This rank's node version and model identity.
                # TYPE inference_node_info gauge
                inference_node_info{version="0.1.0-SNAPSHOT",model="189280 bytes, header sha256 7a9a1a052ea3245e"} 1
                inference_node_time_to_first_token_seconds_sum 1.5
                inference_node_time_to_first_token_seconds_count 3
                inference_node_decode_tokens_per_second 18.31
                """));
        node.start();
        answers.put("launchctl print system/io.macfleet.inference-node", new RemoteShell.Answer(0, """
                system/io.macfleet.inference-node = {
                	active count = 1
                	state = running
                	pid = 4242
                	runs = 3
                	last exit code = (never exited)
                }
                """, ""));
        answers.put("rdma_ctl status", new RemoteShell.Answer(0, "enabled\n", ""));
        answers.put("ibv_devinfo", new RemoteShell.Answer(0, "hca_id:\trdma_en2\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n", ""));
        answers.put("tail -n 200 /var/log/macfleet/io.macfleet.inference-node.err.log", new RemoteShell.Answer(0, "", ""));
    }

    @AfterEach
    void stop() {
        node.stop(0);
    }

    private static void reply(com.sun.net.httpserver.HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    RankObservation look() {
        MachineShell shell = (machine, command, timeout) -> {
            String line = String.join(" ", java.util.stream.Stream.concat(java.util.stream.Stream.of(command.program()), command.arguments().stream()).toList());
            if (line.equals("ibv_devinfo") && devinfoHangs) {
                throw new MachineShell.TimedOut("`ibv_devinfo` did not finish within the command timeout of " + timeout.toMillis() + " ms");
            }
            RemoteShell.Answer answer = answers.get(line);
            if (answer == null) {
                throw new AssertionError("unexpected command " + line);
            }
            return answer;
        };
        NodeProbe probe = new NodeProbe(shell, Duration.ofSeconds(2), Duration.ofSeconds(3), Clock.systemUTC());
        return probe.observe(new SupervisedCluster.Rank(1, "studio-02", URI.create("http://127.0.0.1:" + node.getAddress().getPort() + "/"),
                "io.macfleet.inference-node", "/var/log/macfleet/io.macfleet.inference-node.err.log"));
    }

    @Test
    void aServingRankWithItsVersionModelAndSpeed() {
        RankObservation rank = look();
        assertThat(rank.health()).isEqualTo(RankObservation.Health.SERVING);
        assertThat(rank.version()).hasValue("0.1.0-SNAPSHOT");
        assertThat(rank.model()).hasValue("189280 bytes, header sha256 7a9a1a052ea3245e");
        assertThat(rank.tokensPerSecond().getAsDouble()).isEqualTo(18.31);
        assertThat(rank.timeToFirstTokenSeconds().getAsDouble()).isEqualTo(0.5);
        assertThat(rank.pid()).hasValue(4242L);
        assertThat(rank.runs()).hasValue(3);
        assertThat(rank.rdma()).isEqualTo(RankObservation.Rdma.HEALTHY);
    }

    @Test
    void aMissingPeerIsDegradedAndFormingIsStarting() {
        healthStatus = 503;
        healthBody = "{\"status\":\"degraded\",\"rank\":1,\"error\":\"rank 0 is missing: rank 0 closed its connection (process ended?)\"}";
        RankObservation degraded = look();
        assertThat(degraded.health()).isEqualTo(RankObservation.Health.DEGRADED);
        assertThat(degraded.healthDetail()).isEqualTo("rank 0 is missing: rank 0 closed its connection (process ended?)");
        healthBody = "{\"status\":\"degraded\",\"rank\":1,\"error\":\"forming the cluster\"}";
        assertThat(look().health()).isEqualTo(RankObservation.Health.STARTING);
    }

    @Test
    void rdmaWedgedMissingOrFailingInTheLogOfThisRun() {
        healthStatus = 503;
        healthBody = "{\"status\":\"degraded\",\"rank\":1,\"error\":\"the model is loading\"}";
        devinfoHangs = true;
        RankObservation hanging = look();
        assertThat(hanging.rdma()).isEqualTo(RankObservation.Rdma.NOT_ANSWERING);
        assertThat(hanging.rdmaEvidence()).isEqualTo("ibv_devinfo did not answer within 3 s");

        devinfoHangs = false;
        answers.put("ibv_devinfo", new RemoteShell.Answer(255, "", "No IB devices found\n"));
        RankObservation missing = look();
        assertThat(missing.rdma()).isEqualTo(RankObservation.Rdma.DEVICES_MISSING);
        assertThat(missing.rdmaEvidence()).contains("No IB devices found");

        answers.put("ibv_devinfo", new RemoteShell.Answer(0, "hca_id:\trdma_en2\n", ""));
        // An earlier run's error is history: only what follows the node's last start line counts.
        answers.put("tail -n 200 /var/log/macfleet/io.macfleet.inference-node.err.log", new RemoteShell.Answer(0, """
                [jaccl] Changing queue pair to RTR failed with errno 22
                inference-node: rank 1 of 2 (tensor): tensor; rank 0: ...
                inference-node: rank 1: cluster of 2 formed
                """, ""));
        assertThat(look().rdma()).isEqualTo(RankObservation.Rdma.HEALTHY);
        answers.put("tail -n 200 /var/log/macfleet/io.macfleet.inference-node.err.log", new RemoteShell.Answer(0, """
                inference-node: rank 1 of 2 (tensor): tensor; rank 0: ...
                [jaccl] Changing queue pair to RTR failed with errno 22
                """, ""));
        RankObservation logged = look();
        assertThat(logged.rdma()).isEqualTo(RankObservation.Rdma.FAILURE_IN_LOG);
        assertThat(logged.rdmaEvidence()).isEqualTo("the node's log says \"[jaccl] Changing queue pair to RTR failed with errno 22\"");
    }

    @Test
    void aRefusalInTheLogAndAnUnreachableNode() {
        answers.put("tail -n 200 /var/log/macfleet/io.macfleet.inference-node.err.log", new RemoteShell.Answer(0, """
                inference-node: rank 1 of 2 (tensor): tensor; rank 0: ...
                inference-node: rank 0 refused this rank (1): node version differs: rank 0 has 0.1.0-SNAPSHOT, rank 1 has 9.9.9
                """, ""));
        node.stop(0);
        RankObservation rank = look();
        assertThat(rank.health()).isEqualTo(RankObservation.Health.UNREACHABLE);
        assertThat(rank.logRefusal()).hasValue("node version differs: rank 0 has 0.1.0-SNAPSHOT, rank 1 has 9.9.9");
        assertThat(rank.version()).isEmpty();
    }

    @Test
    void rdmaSwitchedOffIsNotWatched() {
        answers.put("rdma_ctl status", new RemoteShell.Answer(0, "disabled\n", ""));
        assertThat(look().rdma()).isEqualTo(RankObservation.Rdma.NOT_IN_USE);
    }
}
