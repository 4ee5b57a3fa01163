package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.deployment.InferenceNodeStep;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.deployment.NodeJars;
import io.macfleet.deployment.NodeService;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.ssh.JdbcHostKeyStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The shipped playbook deploy-node.yaml run on a 2-Mac simulated cluster (two real node JVMs: the smallest cluster that
 * forms): the inference-node step, of cluster scope, deploys once for the cluster and rank 0 answers /health; a new
 * run finds the same node and model running on every rank and is skipped-already-done, restarting nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InferenceNodeStepTest {

    static ProvisioningFixture fixture;
    static ProvisioningService service;
    static int port;

    @BeforeAll
    static void start() throws Exception {
        fixture = ProvisioningFixture.start(Files.createTempDirectory("macfleet-node-step"), 2, "127.0.0.91");
        Path model = NodeJars.tinyModel(fixture.directory, 11);
        port = NodeJars.freePortRange(4);
        Path inventoryFile = fixture.inventory.resolve("macfleet.yaml");
        String inventory = Files.readString(inventoryFile);
        Files.writeString(inventoryFile, inventory.replace("      kind: full-mesh\n",
                "      kind: full-mesh\n    inference:\n      model: \"" + model + "\"\n      port: " + port + "\n"));
        fixture.desiredState.apply(InventoryLoader.load(fixture.inventory).inventory(), "test", fixture.inventory.toString());
        NodeService nodes = new NodeService(fixture.desiredState, new ClusterCabling(fixture.facts), fixture.facts, new JdbcHostKeyStore(fixture.dataSource),
                new JdbcAuditLog(fixture.dataSource), new NodeDeploymentStore(fixture.dataSource), Clock.systemUTC());
        nodes.healthTimeout(Duration.ofSeconds(180));
        List<StepType<?>> types = new ArrayList<>(StepTypes.builtIn().all().stream().filter(type -> !type.name().equals("inference-node")).toList());
        types.add(new InferenceNodeStep.Type(nodes));
        service = new ProvisioningService(fixture.dataSource, fixture.facts, new ClusterCabling(fixture.facts), new StepTypes(types), Path.of("playbooks"),
                Clock.systemUTC());
    }

    @AfterAll
    static void stop() {
        if (fixture != null) {
            fixture.close();
        }
    }

    @Test
    @Order(1)
    void aMachineThatStoppedOnTheWayKeepsTheWholeClusterFromBeingDeployed() throws Exception {
        Path playbook = fixture.directory.resolve("only-studio-01.yaml");
        Files.writeString(playbook, """
                name: only-studio-01
                steps:
                  - name: first-machine-only
                    type: command
                    params:
                      check: { argv: [hostname], outputMatches: ["^studio-01"], explain: "only studio-01 gets past this step" }
                  - name: inference-node
                    type: inference-node
                """);
        RunOutcome outcome = service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(), playbook.toString(), null, null, false, null),
                "carol", new ProvisioningListener() { });
        assertThat(outcome.machines()).containsEntry("studio-01", "failed").containsEntry("studio-02", "failed");
        List<Map<String, Object>> steps = steps(outcome.runId());
        assertThat(steps).filteredOn(step -> step.get("step").equals("inference-node")).containsExactly(
                Map.of("machine", "studio-01", "step", "inference-node", "status", "failed",
                        "summary", "not deploying the inference node of llm-a: studio-02 did not reach this step"),
                Map.of("machine", "studio-02", "step", "inference-node", "status", "pending", "summary", "null"));
        assertThat(count("select count(*) from node_deployment")).isZero();
    }

    @Test
    @Order(2)
    void theDeployNodePlaybookDeploysTheClusterOnceAndARerunIsAlreadyDone() throws Exception {
        RunOutcome first = service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(), "deploy-node", null, null, false, null),
                "alice", new ProvisioningListener() { });
        List<Map<String, Object>> steps = steps(first.runId());
        assertThat(first.status()).as(steps.toString()).isEqualTo("succeeded");
        assertThat(steps).filteredOn(step -> step.get("step").equals("inference-node")).hasSize(2)
                .allMatch(step -> step.get("status").equals("done"));
        HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.91:" + port + "/health"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        // One deployment for the cluster, not one per machine that met at the step.
        assertThat(count("select count(*) from node_deployment")).isEqualTo(1);
        assertThat(count("select count(*) from audit_event where action = 'node.deploy' and actor = 'alice'")).isEqualTo(2);

        RunOutcome again = service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(), "deploy-node", null, null, true, null),
                "bob", new ProvisioningListener() { });
        List<Map<String, Object>> rerun = steps(again.runId());
        assertThat(again.status()).as(rerun.toString()).isEqualTo("succeeded");
        assertThat(rerun).filteredOn(step -> step.get("step").equals("inference-node")).hasSize(2)
                .allSatisfy(step -> assertThat(step.get("status")).isEqualTo("skipped-already-done"));
        assertThat(service.run(again.runId()).orElseThrow().steps()).filteredOn(step -> step.step().equals("inference-node"))
                .allSatisfy(step -> assertThat(step.summary()).contains("runs on all 2 ranks of " + ProvisioningFixture.CLUSTER));
        assertThat(count("select count(*) from node_deployment")).isEqualTo(1);
        assertThat(count("select count(*) from audit_event where action = 'node.deploy' and actor = 'bob'")).isZero();
    }

    private List<Map<String, Object>> steps(long runId) {
        return service.run(runId).orElseThrow().steps().stream().map(step -> Map.<String, Object>of("machine", step.machine(), "step", step.step(),
                "status", step.status(), "summary", String.valueOf(step.summary()))).toList();
    }

    private static long count(String sql) {
        return io.macfleet.database.Jdbc.withConnection(fixture.dataSource, connection -> io.macfleet.database.Jdbc.query(connection, sql,
                row -> row.getLong(1)).getFirst());
    }
}
