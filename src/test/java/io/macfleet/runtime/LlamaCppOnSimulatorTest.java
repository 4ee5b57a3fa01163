package io.macfleet.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.cabling.ClusterCabling;
import io.macfleet.deployment.NodeJars;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTransport;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The llama.cpp runtime on four simulated Macs running the REAL llama.cpp programs: llama-server on studio-01 (the
 * head), ggml-rpc-server on the three others, each bound only to its "Thunderbolt" loopback address toward the head;
 * the inventory, the facts, the cabling check and the plan as in production. One fleet for the class: deploy, a kill
 * -9 of an rpc-server (serving again within 20 s through the ordered restart), a crash loop alerted. Skipped without
 * a llama.cpp build (.ci/llama-cpp.sh), failed then when CI=true.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LlamaCppOnSimulatorTest {

    static final String KEY = "MACFLEET_TEST_LLAMA_KEY";
    static final String KEY_VALUE = "test-key-7f3a";

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;
    static RuntimeService runtimes;
    static SshSettings settings;
    static Path model;
    static Path inventoryDirectory;
    static int httpPort;
    static int rpcPort;

    @BeforeAll
    static void start() throws Exception {
        Path build = LlamaCppBuild.required();
        simulation = SimulatedInventory.start(directory, 4, "127.0.93.11");
        List<String> names = List.of("studio-01", "studio-02", "studio-03", "studio-04");
        simulation.cableFullMesh(names);
        simulation.fleet.assignThunderboltLoopbackAddresses();
        httpPort = SimulatedRuntimes.freePort();
        rpcPort = SimulatedRuntimes.freePort();
        model = NodeJars.tinyModel(directory, 11);
        Path keyFile = directory.resolve("api-key");
        Files.writeString(keyFile, KEY_VALUE);
        Path inventory = SimulatedRuntimes.runtimeInventory(simulation, names, "llama.cpp", httpPort, model, """
                build: %s
                rpcPort: %d
                threads: 1
                context: 256
                apiKey: "file:%s"
                """.formatted(build, rpcPort, keyFile));
        inventoryDirectory = inventory;
        settings = SimulatedInventory.settings(Duration.ofSeconds(60));
        runtimes = SimulatedRuntimes.serviceFor(simulation, inventory, settings);
    }

    @AfterAll
    static void stop() {
        if (simulation != null) {
            simulation.close();
        }
    }

    @Test
    @Order(1)
    void thePlanBindsEachRpcServerToItsThunderboltAddressTowardTheHeadAndSplitsByMemory() {
        RuntimePlan plan = runtimes.plan("llm-a", Optional.empty(), Optional.empty());
        RuntimePlan.MachinePlan head = plan.machine("studio-01");
        List<String> argv = head.daemons().getFirst().daemon().programArguments();
        String peers = argv.get(argv.indexOf("--rpc") + 1);
        for (String peer : List.of("studio-02", "studio-03", "studio-04")) {
            RuntimePlan.DaemonPlan rpc = plan.machine(peer).daemons().getFirst();
            String bind = rpc.listens().getFirst().address();
            assertThat(bind).as(peer).startsWith("127.1").isNotEqualTo(simulation.fleet.machine(peer).address());
            assertThat(rpc.daemon().programArguments()).containsSequence("-H", bind, "-p", Integer.toString(rpcPort), "-c");
            assertThat(peers).contains(bind + ":" + rpcPort);
        }
        // SimulatedInventory: studio-01 and -03 have 512 GB, -02 and -04 256 GB.
        assertThat(argv).containsSequence("--tensor-split", "2,1,2,1");
        assertThat(argv).contains("--metrics", "--api-key-file").containsSequence("-ngl", "99")
                .containsSequence("--host", simulation.fleet.machine("studio-01").address());
        assertThat(String.join(" ", argv)).doesNotContain(KEY_VALUE);
        assertThat(RuntimePlans.text(plan)).doesNotContain(KEY_VALUE);
    }

    @Test
    @Order(2)
    void deploysRealLlamaCppProcessesThatServeAChatCompletionOverTheRpcServers() throws Exception {
        // A port in use on a Mac (here by this test's JVM, on the head's address) is named with its holder; nothing switches.
        try (ServerSocket squatter = new ServerSocket(httpPort, 1, java.net.InetAddress.getByName(simulation.fleet.machine("studio-01").address()))) {
            assertThatThrownBy(() -> runtimes.deploy("llm-a", Optional.empty(), settings, io.macfleet.deployment.NodeDeployer.Listener.NONE))
                    .hasMessageContaining("port " + httpPort + " of " + simulation.fleet.machine("studio-01").address() + " on studio-01")
                    .hasMessageContaining("is held by java (pid " + ProcessHandle.current().pid())
                    .hasMessageContaining("nothing was switched");
            assertThat(simulation.fleet.machine("studio-02").launchd().labels()).doesNotContain(LlamaCppRuntime.RPC_LABEL);
        }
        long started = System.nanoTime();
        RuntimeDeployer.Outcome outcome = runtimes.deploy("llm-a", Optional.empty(), settings, io.macfleet.deployment.NodeDeployer.Listener.NONE);
        System.out.printf("llama.cpp deploy to 4 simulated Macs: %.1f s%n", (System.nanoTime() - started) / 1e9);
        assertThat(outcome.switched()).isTrue();
        assertThat(outcome.staged()).allSatisfy(staged -> assertThat(staged.build()).isPresent().isEqualTo(outcome.staged().getFirst().build()));
        assertThat(chat(outcome.endpoint(), KEY_VALUE)).isEqualTo(200);
        assertThat(chat(outcome.endpoint(), "wrong-key")).isEqualTo(401);
        // macfleet's scrape of llama-server's own /metrics (issue 30): behind the API key, tokens counted
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        URI metrics = io.macfleet.inference.InferenceScraper.metricsUri(outcome.endpoint(), new LlamaCppRuntime().metricsPath().orElseThrow());
        io.macfleet.runtime.InferenceCounters counters = io.macfleet.inference.InferenceScraper.fetch(http, new LlamaCppRuntime(), metrics,
                java.util.Optional.of(KEY_VALUE));
        assertThat(counters.generatedTokens().orElse(0)).isPositive();
        assertThat(counters.promptTokens().orElse(0)).isPositive();
        assertThat(counters.queueDepth()).hasValue(0);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> io.macfleet.inference.InferenceScraper.fetch(http, new LlamaCppRuntime(), metrics,
                java.util.Optional.<String>empty())).hasMessageContaining("HTTP 401");

        List<RuntimeService.DaemonStatus> status = runtimes.status("llm-a", settings);
        assertThat(status).hasSize(4).allSatisfy(daemon -> assertThat(daemon.ready()).as(daemon.toString()).isTrue());
        assertThat(status.stream().filter(daemon -> daemon.label().equals(LlamaCppRuntime.RPC_LABEL)))
                .hasSize(3).allSatisfy(daemon -> assertThat(daemon.transport()).hasValueSatisfying(t -> assertThat(t).startsWith("tcp (fallback")));
        // Bound to the Thunderbolt address only: the same port at the peer's management address does not answer.
        try (Socket socket = new Socket()) {
            assertThatThrownBy(() -> socket.connect(new java.net.InetSocketAddress(simulation.fleet.machine("studio-02").address(), rpcPort), 1000))
                    .isInstanceOf(java.io.IOException.class);
        }

        RuntimeDeployer.Outcome again = runtimes.deploy("llm-a", Optional.empty(), settings, io.macfleet.deployment.NodeDeployer.Listener.NONE);
        assertThat(again.switched()).isFalse();
        assertThat(again.summary()).startsWith("nothing to do");
        theDaemonsRunAsTheirOwnAccountAndTheSshUserCannotReplaceWhatTheyRun();
    }

    /**
     * Least privilege (issue 29), as for the bundled node: both daemons run as {@code _macfleet}; programs, model and
     * plists are root's; the API key is the daemon account's alone; only the rpc-server's cache is the daemon's to write.
     */
    private static void theDaemonsRunAsTheirOwnAccountAndTheSshUserCannotReplaceWhatTheyRun() throws Exception {
        RuntimePlan plan = runtimes.plan("llm-a", Optional.empty(), Optional.empty());
        for (RuntimePlan.MachinePlan machine : plan.machines()) {
            var mac = simulation.fleet.machine(machine.machine());
            for (RuntimePlan.DaemonPlan daemon : machine.daemons()) {
                String label = daemon.daemon().label();
                assertThat(mac.launchd().userOf(label)).as(label).hasValue(io.macfleet.deployment.DaemonAccount.NAME);
                assertThat(Files.readString(mac.resolve(daemon.daemon().plistPath()))).contains("<key>UserName</key>\n\t<string>_macfleet</string>");
                assertThat(mac.ownerOf(daemon.daemon().plistPath())).isEqualTo("root:wheel 644");
            }
            assertThat(mac.ownerOf(LlamaCppRuntime.HOME)).isEqualTo("root:wheel 755");
            for (String directory : machine.directories()) {
                assertThat(mac.ownerOf(directory)).as(directory)
                        .isEqualTo(directory.equals(LlamaCppRuntime.CACHE_DIRECTORY) ? "_macfleet:_macfleet 755" : "root:wheel 755");
            }
            if (machine.rank() == 0) {
                assertThat(machine.directories()).contains(LlamaCppRuntime.MODEL_DIRECTORY);
            }
            for (RuntimePlan.StagedFile file : machine.files()) {
                String expected = file.destination().endsWith("/api-key") ? "_macfleet:_macfleet 600"
                        : "root:wheel " + Integer.toOctalString(file.mode());
                assertThat(mac.ownerOf(file.destination())).as(file.destination()).isEqualTo(expected);
            }
            if (machine.rank() > 0) {
                assertThat(mac.ownerOf(LlamaCppRuntime.CACHE_DIRECTORY)).isEqualTo("_macfleet:_macfleet 755");
            }
        }
        RuntimePlan.MachinePlan head = plan.machine("studio-01");
        String server = head.files().stream().map(RuntimePlan.StagedFile::destination).filter(path -> path.endsWith("/llama-server")).findFirst().orElseThrow();
        String buildDirectory = server.substring(0, server.lastIndexOf('/'));
        String modelOnMac = head.files().stream().map(RuntimePlan.StagedFile::destination).filter(path -> path.endsWith(".gguf")).findFirst().orElseThrow();
        java.nio.file.Path serverOnMac = simulation.fleet.machine("studio-01").resolve(server);
        byte[] before = Files.readAllBytes(serverOnMac);
        try (SshRun run = transport().openRun()) {
            var results = run.onFleet(List.of(head.ssh()), machine -> {
                // Over SFTP: overwrite the program, or put another file beside it.
                assertThatThrownBy(() -> machine.upload(server, "#!/bin/sh\n".getBytes(), 0755)).hasMessageContaining("ermission denied");
                assertThatThrownBy(() -> machine.upload(buildDirectory + "/libevil.dylib", "x".getBytes(), 0644)).hasMessageContaining("ermission denied");
                assertThatThrownBy(() -> machine.upload(modelOnMac, "not a model".getBytes(), 0644)).hasMessageContaining("ermission denied");
                // By commands without sudo.
                // (the simulated Mac's shell has mv, not cp: a file of the SSH user's own, moved over the program)
                String own = RuntimeDeployer.STAGING + "/llama-server";
                machine.upload(own, "#!/bin/sh\n".getBytes(), 0755);
                io.macfleet.ssh.CommandResult moved = machine.execute(io.macfleet.ssh.Command.of("mv", "-f", own, server));
                assertThat(moved.succeeded()).isFalse();
                assertThat(moved.stderr()).contains("Permission denied");
                assertThat(machine.execute(io.macfleet.ssh.Command.of("rm", "-f", server)).stderr()).contains("Permission denied");
                assertThat(machine.execute(io.macfleet.ssh.Command.of("chmod", "777", server)).stderr()).contains("Operation not permitted");
                assertThat(machine.execute(io.macfleet.ssh.Command.of("cat", LlamaCppRuntime.HOME + "/api-key")).stderr()).contains("Permission denied");
                return null;
            });
            assertThat(results).allSatisfy(result -> assertThat(result.succeeded()).as(result.describe()).isTrue());
        }
        assertThat(Files.readAllBytes(serverOnMac)).isEqualTo(before);
    }

    @Test
    @Order(3)
    void aKilledRpcServerIsRestartedInOrderAndTheClusterServesAgainWithinTwentySeconds() throws Exception {
        RuntimeSupervisor supervisor = supervisor();
        try (SshRun run = transport().openRun()) {
            assertThat(supervisor.round(run)).isInstanceOf(RuntimeSupervisor.Decision.Serving.class);
            long killed = System.nanoTime();
            assertThat(simulation.fleet.crashDaemon("studio-03", LlamaCppRuntime.RPC_LABEL)).isTrue();
            RuntimeSupervisor.Decision decision = supervisor.round(run);
            assertThat(decision).isInstanceOf(RuntimeSupervisor.Decision.Restarted.class);
            assertThat(((RuntimeSupervisor.Decision.Restarted) decision).order())
                    .containsSubsequence("studio-03 " + LlamaCppRuntime.RPC_LABEL, "studio-01 " + LlamaCppRuntime.SERVER_LABEL);
            while (chat(runtimes.endpoint("llm-a"), KEY_VALUE) != 200 && System.nanoTime() - killed < 30_000_000_000L) {
                Thread.sleep(200);
            }
            double seconds = (System.nanoTime() - killed) / 1e9;
            System.out.printf("kill -9 of ggml-rpc-server on studio-03: serving again after %.1f s%n", seconds);
            assertThat(seconds).isLessThan(20);
            assertThat(supervisor.round(run)).isInstanceOf(RuntimeSupervisor.Decision.Serving.class);
        }
    }

    @Test
    @Order(4)
    void anRpcServerInACrashLoopIsAlertedAfterThreeOrderedRestarts() throws Exception {
        RuntimeSupervisor supervisor = supervisor(Duration.ofSeconds(5));
        try (SshRun run = transport().openRun()) {
            assertThat(supervisor.round(run)).isInstanceOf(RuntimeSupervisor.Decision.Serving.class);
            simulation.fleet.machine("studio-04").faults().crashLoop(LlamaCppRuntime.RPC_LABEL);
            try {
                simulation.fleet.crashDaemon("studio-04", LlamaCppRuntime.RPC_LABEL);
                for (int attempt = 1; attempt <= RuntimeSupervisor.ATTEMPTS; attempt++) {
                    assertThat(supervisor.round(run)).isInstanceOf(RuntimeSupervisor.Decision.Restarted.class);
                }
                RuntimeSupervisor.Decision alert = supervisor.round(run);
                assertThat(alert).isInstanceOf(RuntimeSupervisor.Decision.Alert.class);
                assertThat(((RuntimeSupervisor.Decision.Alert) alert).message()).contains("crash loop", LlamaCppRuntime.RPC_LABEL + " on studio-04");
                assertThat(((RuntimeSupervisor.Decision.Alert) alert).raisedNow()).isTrue();
                assertThat(supervisor.round(run)).as("no restart while the alert is open")
                        .isEqualTo(new RuntimeSupervisor.Decision.Alert(((RuntimeSupervisor.Decision.Alert) alert).message(), false));
            } finally {
                simulation.fleet.machine("studio-04").faults().stopCrashLoops();
            }
            supervisor.reset();
            RuntimeSupervisor.Decision healed = supervisor.round(run);
            assertThat(healed).isInstanceOf(RuntimeSupervisor.Decision.Restarted.class);
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (chat(runtimes.endpoint("llm-a"), KEY_VALUE) != 200 && System.nanoTime() < deadline) {
                Thread.sleep(250);
            }
            assertThat(supervisor.round(run)).isInstanceOf(RuntimeSupervisor.Decision.Serving.class);
        }
    }

    @Test
    @Order(5)
    void anOsUpdateCampaignDrainsEveryLlamaCppDaemonAndUndrainsRpcServersBeforeTheHead() throws Exception {
        for (String machine : List.of("studio-01", "studio-02", "studio-03", "studio-04")) {
            simulation.fleet.machine(machine).setRelease(io.macfleet.simulator.MacosRelease.of("26.1"));
        }
        Path password = directory.resolve("volume-owner-password");
        Files.writeString(password, "macfleet-demo\n");
        Path yaml = inventoryDirectory.resolve("macfleet.yaml");
        if (!Files.readString(yaml).contains("volumeOwner")) {
            Files.writeString(yaml, Files.readString(yaml).replace("defaults:\n", "defaults:\n  volumeOwner:\n    user: admin\n    password: \"file:"
                    + password + "\"\n"));
        }
        LoadResult loaded = InventoryLoader.load(inventoryDirectory);
        assertThat(loaded.errors()).isEmpty();
        simulation.desiredState.apply(loaded.inventory(), "test", inventoryDirectory.toString());
        io.macfleet.osupdate.ssh.SshUpdateMethod ssh = new io.macfleet.osupdate.ssh.SshUpdateMethod(settings,
                new io.macfleet.ssh.JdbcHostKeyStore(simulation.dataSource), new io.macfleet.audit.JdbcAuditLog(simulation.dataSource),
                io.macfleet.osupdate.ssh.SshUpdateMethod.Requirements.DEFAULTS);
        io.macfleet.osupdate.OsUpdateCampaigns campaigns = new io.macfleet.osupdate.OsUpdateCampaigns(simulation.dataSource, simulation.desiredState,
                simulation.facts, new ClusterCabling(simulation.facts), List.of(ssh), new io.macfleet.osupdate.OsUpdateCampaigns.Options(settings,
                Duration.ofMillis(200), io.macfleet.osupdate.PhaseDeadlines.all(Duration.ofSeconds(120)), Duration.ofSeconds(60)));
        io.macfleet.osupdate.CampaignView end = campaigns.apply(new io.macfleet.osupdate.OsUpdateCampaigns.Request(List.of("llm-a"), false, "26.2",
                Optional.of("25C56"), "ssh", 1, false, Optional.empty(), Optional.empty()), "alice");
        assertThat(end.status()).as(end.toString()).isEqualTo("succeeded");
        List<String> details = io.macfleet.database.Jdbc.withConnection(simulation.dataSource, connection -> io.macfleet.database.Jdbc.query(connection,
                "select detail from audit_event where action in ('os-update.drain', 'os-update.undrain') order by id", row -> row.getString(1)));
        assertThat(details).anyMatch(detail -> detail.contains("disable and bootout system/" + LlamaCppRuntime.SERVER_LABEL))
                .anyMatch(detail -> detail.contains("disable and bootout system/" + LlamaCppRuntime.RPC_LABEL));
        List<String> undrained = details.stream().filter(detail -> detail.contains("and bootstrap")).toList();
        assertThat(undrained).hasSize(4);
        assertThat(undrained.getLast()).contains(LlamaCppRuntime.SERVER_LABEL);
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (chat(runtimes.endpoint("llm-a"), KEY_VALUE) != 200 && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        assertThat(chat(runtimes.endpoint("llm-a"), KEY_VALUE)).isEqualTo(200);
        assertThat(runtimes.status("llm-a", settings)).allSatisfy(daemon -> assertThat(daemon.ready()).as(daemon.toString()).isTrue());
    }

    static RuntimeSupervisor supervisor() {
        return supervisor(Duration.ofSeconds(60));
    }

    /** A supervisor that waits this long for each restarted daemon to answer. */
    static RuntimeSupervisor supervisor(Duration readyTimeout) {
        RuntimePlan plan = runtimes.plan("llm-a", Optional.empty(), Optional.empty());
        return new RuntimeSupervisor("llm-a", new LlamaCppRuntime(), plan.machines().stream().map(RuntimePlan.MachinePlan::ssh).toList(),
                readyTimeout, Clock.systemUTC());
    }

    static SshTransport transport() {
        return new SshTransport(settings, new InMemoryHostKeyStore(), event -> {
        }, Clock.systemUTC());
    }

    /** The status of a chat completion, -1 when nothing answered. */
    static int chat(String endpoint, String key) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            return client.send(HttpRequest.newBuilder(URI.create(endpoint + "/chat/completions")).timeout(Duration.ofSeconds(60))
                    .header("Content-Type", "application/json").header("Authorization", "Bearer " + key)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4}")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode();
        } catch (java.io.IOException e) {
            return -1;
        }
    }

}
