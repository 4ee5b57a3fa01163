package io.macfleet.runtime;

import io.macfleet.demo.DemoMlx;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.EngineConfigurations;
import io.macfleet.cabling.PeerConfiguration;
import io.macfleet.cabling.RuntimeCablingFixtures;
import io.macfleet.deployment.LaunchDaemon;
import io.macfleet.inventory.InferenceSettings;
import io.macfleet.runtime.RuntimePlan.MachinePlan;
import io.macfleet.runtime.RuntimePlan.StagedFile;
import io.macfleet.ssh.SshTarget;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MLX runtime's plan against mlx's own launcher and backends (ml-explore/mlx at 846d176 and ml-explore/mlx-lm at
 * d78bf58, both 2026-08-22; read with {@code fetch}). Each rule names the source lines it comes from.
 */
class MlxRuntimeTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] MACS = {"studio-01", "studio-02", "studio-03", "studio-04"};

    @TempDir
    Path directory;
    Path model;

    @BeforeEach
    void model() throws Exception {
        model = Files.createDirectories(directory.resolve("Qwen3-0.6B-4bit"));
        Files.writeString(model.resolve("config.json"), "{\"model_type\": \"qwen3\"}");
        Files.writeString(model.resolve("model.safetensors"), "weights");
        Files.writeString(model.resolve("tokenizer.json"), "{}");
    }

    @Test
    void everyJacclRankGetsTheEnvironmentAndDeviceFileMlxLaunchGivesIt() throws Exception {
        ClusterCabling.Cluster cabling = RuntimeCablingFixtures.fullMesh("llm-a", MACS);
        RuntimePlan plan = new MlxRuntime().plan(cluster(cabling, Map.of()));
        CablingReport report = cabling.check();
        PeerConfiguration peers = PeerConfiguration.from(report, cabling.facts());

        assertThat(plan.machines()).extracting(MachinePlan::machine).containsExactly(MACS);
        String deviceFile = null;
        for (MachinePlan machine : plan.machines()) {
            LaunchDaemon daemon = machine.daemons().getFirst().daemon();
            Map<String, String> environment = daemon.environment();
            // launch.py:150: MLX_RANK is the host's index in the hostfile.
            assertThat(environment).containsEntry("MLX_RANK", Integer.toString(machine.rank()));
            // launch.py:374-375 and 383-386: rank 0's first IP (its management address) and --starting-port (default 32323, 508-512).
            assertThat(environment).containsEntry("MLX_JACCL_COORDINATOR", "10.0.0.1:32323");
            // launch.py:387-388: MLX_JACCL_RING only for jaccl-ring.
            assertThat(environment).doesNotContainKey("MLX_JACCL_RING");
            // distributed.cpp:182-198: init("any") tries ring before jaccl, so a jaccl rank must not carry MLX_HOSTFILE.
            assertThat(environment).doesNotContainKey("MLX_HOSTFILE");
            // launch.py:143-147: MLX_IBV_DEVICES names a file the rank's Mac holds; here one the deployment writes.
            StagedFile file = written(machine, environment.get("MLX_IBV_DEVICES"));
            String content = ((StagedFile.Source.Content) file.source()).text();
            deviceFile = deviceFile == null ? content : deviceFile;
            // launch.py:389: the same json.dumps of all rows for every rank.
            assertThat(content).isEqualTo(deviceFile);
            // mlx_lm/server.py:1732-1743 (--host, --port), 1851-1855 (--pipeline absent: tensor parallelism, 284-288).
            assertThat(daemon.programArguments()).containsExactly(MlxRuntime.venv("0.29.3", "0.28.2") + "/bin/python3", "-m", "mlx_lm.server", "--model",
                    daemon.programArguments().get(4), "--host", "10.0.0." + (machine.rank() + 1), "--port", "8080");
            // What mlx's backends check when the rank starts (simulator.MlxRankStart.check, cited there): nothing to refuse.
            assertThat(io.macfleet.simulator.MlxRankStart.check(environment, path -> Optional.ofNullable(path.equals(environment.get("MLX_IBV_DEVICES")) ? content : null),
                    devicesOf(cabling, machine.machine()))).isEmpty();
        }
        // launch.py:146: echo CONTENT >$fname, so the file ends with a newline; launch.py:378-381 and jaccl.cpp:17-55, 141-155: N rows of
        // N entries, null on the diagonal; row i column j is rank i's RDMA device on the port cabled to rank j (config.py:476: rdma_ + interface).
        assertThat(deviceFile).endsWith("]\n").startsWith("[[null, \"rdma_en");
        JsonNode matrix = JSON.readTree(deviceFile);
        assertThat(matrix).hasSize(4);
        for (int row = 0; row < 4; row++) {
            assertThat(matrix.get(row)).hasSize(4);
            for (int column = 0; column < 4; column++) {
                if (row == column) {
                    assertThat(matrix.get(row).get(column).isNull()).isTrue();
                } else {
                    assertThat(matrix.get(row).get(column).asText()).isEqualTo(peers.between(MACS[row], MACS[column]).getFirst().rdmaDevice());
                }
            }
        }
        // The same matrix as the jaccl hostfile macfleet writes for mlx.launch (cabling config --format mlx-jaccl).
        JsonNode hostfile = JSON.readTree(EngineConfigurations.render(EngineConfigurations.Format.MLX_JACCL, report, cabling.facts(), List.of(), false));
        for (int row = 0; row < 4; row++) {
            assertThat(hostfile.get("hosts").get(row).get("rdma")).isEqualTo(matrix.get(row));
        }
        assertThat(plan.endpoint()).isEqualTo("http://10.0.0.1:8080/v1");
        assertThat(plan.build()).isEqualTo("mlx 0.29.3, mlx-lm 0.28.2");
    }

    @Test
    void jacclRingAndPipelineAndExtraEnvironmentAreAsTheLauncherPassesThem() throws Exception {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("backend", "jaccl-ring");
        settings.put("coordinatorPort", 40000);
        settings.put("environment", Map.of("MLX_METAL_FAST_SYNCH", "1"));
        RuntimePlan plan = new MlxRuntime().plan(cluster(RuntimeCablingFixtures.fullMesh("llm-a", MACS), settings, InferenceSettings.Parallelism.PIPELINE));

        LaunchDaemon daemon = plan.machine("studio-03").daemons().getFirst().daemon();
        // launch.py:387-388.
        assertThat(daemon.environment()).containsEntry("MLX_JACCL_RING", "1").containsEntry("MLX_JACCL_COORDINATOR", "10.0.0.1:40000")
                .containsEntry("MLX_RANK", "2");
        // launch.py:133-141: the hostfile's envs and --env reach every rank.
        assertThat(daemon.environment()).containsEntry("MLX_METAL_FAST_SYNCH", "1");
        // mlx_lm/server.py:285 and 1851-1855: --pipeline selects the pipeline group.
        assertThat(daemon.programArguments()).endsWith("--pipeline");
    }

    @Test
    void theRingBackendGivesEachRankItsAddressOnTheLinkFromItsLeftNeighbour() throws Exception {
        ClusterCabling.Cluster cabling = RuntimeCablingFixtures.ring("llm-a", MACS);
        RuntimePlan plan = new MlxRuntime().plan(cluster(cabling, Map.of()));
        PeerConfiguration peers = PeerConfiguration.from(cabling.check(), cabling.facts());

        // The cabling check fails for a mesh but finds the ring: backend ring by default, ranks in ring order from the head.
        assertThat(plan.notes().getFirst()).startsWith("backend ring over the ring");
        assertThat(plan.machines().getFirst().machine()).isEqualTo("studio-01");
        String hostfile = null;
        for (MachinePlan machine : plan.machines()) {
            Map<String, String> environment = machine.daemons().getFirst().daemon().environment();
            // launch.py:316 and 150; ring.cpp:825-839 needs both.
            assertThat(environment).containsEntry("MLX_RANK", Integer.toString(machine.rank())).containsKey("MLX_HOSTFILE")
                    .doesNotContainKeys("MLX_IBV_DEVICES", "MLX_JACCL_COORDINATOR");
            String content = ((StagedFile.Source.Content) written(machine, environment.get("MLX_HOSTFILE")).source()).text();
            hostfile = hostfile == null ? content : hostfile;
            assertThat(content).isEqualTo(hostfile);
            assertThat(io.macfleet.simulator.MlxRankStart.check(environment, path -> Optional.of(content), List.of())).isEmpty();
        }
        List<List<String>> nodes = MlxLaunchContract.ringAddresses(hostfile);
        assertThat(nodes).hasSize(4);
        for (int rank = 0; rank < 4; rank++) {
            // launch.py:305-313: the port counts up from 32323 over hosts and ips.
            assertThat(nodes.get(rank)).hasSize(1);
            assertThat(nodes.get(rank).getFirst()).endsWith(":" + (32323 + rank));
            // ring.cpp:360-374: rank r accepts on nodes[r] and rank r-1 connects there, so nodes[r] must be r's address on the
            // cable from r-1 (the peer address of r-1's link toward r).
            String left = plan.machines().get(Math.floorMod(rank - 1, 4)).machine();
            String self = plan.machines().get(rank).machine();
            assertThat(nodes.get(rank).getFirst()).isEqualTo(peers.between(left, self).getFirst().peerAddress() + ":" + (32323 + rank));
        }
    }

    @Test
    void jacclOnAMeshThatFailsTheCablingCheckIsRefusedWithTheFindingsAndRingSuggested() {
        assertThatThrownBy(() -> new MlxRuntime().plan(cluster(RuntimeCablingFixtures.ring("llm-a", MACS), Map.of("backend", "jaccl"))))
                .isInstanceOf(RuntimeRefused.class)
                .hasMessageContaining("fails the cabling check, which backend jaccl needs")
                .hasMessageContaining("errors: ")
                .hasMessageContaining("The ring backend would work over the ring")
                .hasMessageContaining("backend: ring");
        ClusterCabling.Cluster rdmaOff = RuntimeCablingFixtures.fullMeshRdmaOff("llm-a", "studio-02", MACS);
        assertThatThrownBy(() -> new MlxRuntime().plan(cluster(rdmaOff, Map.of("backend", "jaccl"))))
                .isInstanceOf(RuntimeRefused.class).hasMessageContaining("studio-02");
        // Without a backend setting a cluster that fails the check for a mesh but has a ring gets ring, and the plan says why.
        RuntimePlan plan = new MlxRuntime().plan(cluster(rdmaOff, Map.of()));
        assertThat(plan.notes().getFirst()).startsWith("backend ring over the ring");
        assertThat(plan.notes()).anySatisfy(note -> assertThat(note).contains("fails the cabling check for jaccl").contains("studio-02"));
    }

    @Test
    void aMissingRdmaDeviceIsRefusedNamingTheMacAndPort() {
        ClusterCabling.Cluster cabling = RuntimeCablingFixtures.fullMesh("llm-a", MACS);
        PeerConfiguration peers = PeerConfiguration.from(cabling.check(), cabling.facts());
        PeerConfiguration.PeerLink link = peers.between("studio-03", "studio-01").getFirst();
        ClusterCabling.Cluster missing = RuntimeCablingFixtures.withoutDevice(cabling, "studio-03", link.rdmaDevice());

        assertThatThrownBy(() -> new MlxRuntime().plan(cluster(missing, Map.of("backend", "jaccl")))).isInstanceOf(RuntimeRefused.class)
                .hasMessageContaining("studio-03").hasMessageContaining(link.rdmaDevice()).hasMessageContaining("port " + link.port());
    }

    @Test
    void aModelDirectoryWithoutConfigOrWithShardsMissingIsRefusedBeforeAnythingIsCopied() throws Exception {
        ClusterCabling.Cluster cabling = RuntimeCablingFixtures.fullMesh("llm-a", "studio-01", "studio-02");
        Files.delete(model.resolve("config.json"));
        assertThatThrownBy(() -> new MlxRuntime().plan(cluster(cabling, Map.of()))).isInstanceOf(RuntimeRefused.class)
                .hasMessageContaining("has no config.json");

        Files.writeString(model.resolve("config.json"), "{}");
        Files.delete(model.resolve("model.safetensors"));
        Files.writeString(model.resolve("model-00001-of-00002.safetensors"), "a");
        Files.writeString(model.resolve("model.safetensors.index.json"), """
                {"metadata": {"total_size": 2}, "weight_map": {"a.weight": "model-00001-of-00002.safetensors",
                 "b.weight": "model-00002-of-00002.safetensors"}}""");
        assertThatThrownBy(() -> new MlxRuntime().plan(cluster(cabling, Map.of()))).isInstanceOf(RuntimeRefused.class)
                .hasMessageContaining("missing 1 of the 2 shards").hasMessageContaining("model-00002-of-00002.safetensors");

        Files.writeString(model.resolve("model-00002-of-00002.safetensors"), "b");
        RuntimePlan plan = new MlxRuntime().plan(cluster(cabling, Map.of()));
        assertThat(plan.machine("studio-02").files()).extracting(StagedFile::destination)
                .anyMatch(path -> path.endsWith("/model-00002-of-00002.safetensors")).anyMatch(path -> path.endsWith("/config.json"));
    }

    @Test
    void versionsAreRequiredAndReadBackSoThatSkewIsRefused() {
        ClusterCabling.Cluster cabling = RuntimeCablingFixtures.fullMesh("llm-a", "studio-01", "studio-02");
        Map<String, Object> settings = new HashMap<>(Map.of("mlxLmVersion", "0.28.2"));
        assertThatThrownBy(() -> new MlxRuntime().plan(cluster(cabling, settings, InferenceSettings.Parallelism.TENSOR, false)))
                .isInstanceOf(RuntimeRefused.class).hasMessageContaining("inference.settings.mlxVersion is missing");
        MlxRuntime runtime = new MlxRuntime();
        assertThat(runtime.build("mlx 0.29.3 mlx-lm 0.28.2\n")).hasValue("mlx 0.29.3, mlx-lm 0.28.2");
        assertThat(runtime.build("ModuleNotFoundError: No module named 'mlx'")).isEmpty();
        List<RuntimeDeployer.Staged> staged = List.of(
                new RuntimeDeployer.Staged("studio-01", List.of(), runtime.build("mlx 0.29.3 mlx-lm 0.28.2"), false, true),
                new RuntimeDeployer.Staged("studio-02", List.of(), runtime.build("mlx 0.29.2 mlx-lm 0.28.2"), false, true));
        assertThatThrownBy(() -> RuntimeDeployer.checkSameBuild("mlx", staged)).isInstanceOf(RuntimeRefused.class)
                .hasMessageContaining("studio-01 mlx 0.29.3, mlx-lm 0.28.2, studio-02 mlx 0.29.2, mlx-lm 0.28.2");
    }

    @Test
    void theInstallPinsBothPackagesInTheVirtualEnvironment() throws Exception {
        RuntimePlan plan = new MlxRuntime().plan(cluster(RuntimeCablingFixtures.fullMesh("llm-a", "studio-01", "studio-02"), Map.of()));
        assertThat(new MlxRuntime().installCommands(plan.machine("studio-02"))).containsExactly(
                List.of("/usr/bin/python3", "-m", "venv", MlxRuntime.venv("0.29.3", "0.28.2")),
                List.of(MlxRuntime.venv("0.29.3", "0.28.2") + "/bin/python3", "-m", "pip", "install", "--disable-pip-version-check", "mlx==0.29.3", "mlx-lm==0.28.2"));
    }

    @Test
    void thePlanJsonShowsEachRanksEnvironmentAndTheWrittenFilesWithPathAndContent() throws Exception {
        RuntimePlan plan = new MlxRuntime().plan(cluster(RuntimeCablingFixtures.fullMesh("llm-a", "studio-01", "studio-02"), Map.of()));
        JsonNode body = JSON.readTree(JSON.writeValueAsString(RuntimePlans.body(plan)));
        JsonNode rank1 = body.get("machines").get(1);
        assertThat(rank1.get("daemons").get(0).get("environment").get("MLX_RANK").asText()).isEqualTo("1");
        assertThat(rank1.get("writtenFiles").get(0).get("path").asText()).isEqualTo(MlxRuntime.HOME + "/ibv-devices.json");
        assertThat(rank1.get("writtenFiles").get(0).get("content").asText()).startsWith("[[null, \"rdma_en");
        assertThat(RuntimePlans.text(plan)).contains("MLX_JACCL_COORDINATOR=10.0.0.1:32323");
    }

    /** mlx_lm.server has no API key option (server.py main()): with settings.apiKey rank 0 gets the proxy in front. */
    @Test
    void anApiKeyPutsRankZerosServerOnLoopbackBehindTheProxy() throws Exception {
        ClusterCabling.Cluster cabling = RuntimeCablingFixtures.fullMesh("llm-a", "studio-01", "studio-02");
        java.nio.file.Path jar = java.nio.file.Files.writeString(directory.resolve("inference-node.jar"), "a jar");
        RuntimeCluster keyed = cluster(cabling, Map.of("apiKey", "env:LLM_A_API_KEY"));
        keyed = new RuntimeCluster(keyed.name(), keyed.inference(), keyed.machines(), keyed.model(), Optional.of(jar), keyed.configuredLinks(),
                keyed.cabling());
        RuntimePlan plan = new MlxRuntime().plan(keyed);

        MachinePlan head = plan.machines().getFirst();
        assertThat(head.daemons()).extracting(daemon -> daemon.daemon().label()).containsExactly(MlxRuntime.LABEL, MlxRuntime.PROXY_LABEL);
        RuntimePlan.DaemonPlan server = head.daemons().get(0);
        RuntimePlan.DaemonPlan proxy = head.daemons().get(1);
        assertThat(server.daemon().programArguments()).containsSubsequence("--host", "127.0.0.1", "--port", "8081");
        assertThat(server.listens()).contains(new RuntimePlan.Listen("127.0.0.1", 8081));
        assertThat(server.startOrder()).isEqualTo(1);
        assertThat(proxy.startOrder()).isZero();
        assertThat(proxy.daemon().programArguments()).containsSubsequence("proxy", "--listen", "10.0.0.1:8080", "--to", "127.0.0.1:8081",
                "--api-key", "file:" + MlxRuntime.API_KEY_FILE);
        assertThat(proxy.listens()).containsExactly(new RuntimePlan.Listen("10.0.0.1", 8080));
        assertThat(head.files()).anySatisfy(file -> {
            assertThat(file.destination()).isEqualTo(MlxRuntime.API_KEY_FILE);
            assertThat(file.source()).isEqualTo(new StagedFile.Source.Secret("env:LLM_A_API_KEY"));
            assertThat(file.mode()).isEqualTo(0600);
        });
        assertThat(head.files()).anySatisfy(file -> assertThat(file.source()).isEqualTo(new StagedFile.Source.LocalFile(jar)));
        // Every rank's readiness is the proxy's keyless /health; the endpoint stays the management address and port.
        MachinePlan other = plan.machines().get(1);
        assertThat(other.daemons()).hasSize(1);
        assertThat(other.daemons().getFirst().daemon().environment()).containsEntry("MACFLEET_MLX_READY_URL", "http://10.0.0.1:8080/health");
        assertThat(other.files()).noneSatisfy(file -> assertThat(file.destination()).isEqualTo(MlxRuntime.API_KEY_FILE));
        assertThat(plan.endpoint()).isEqualTo("http://10.0.0.1:8080/v1");
        assertThat(plan.health()).isEqualTo(new RuntimePlan.Probe.Http(java.net.URI.create("http://10.0.0.1:8080/health")));

        RuntimePlan open = new MlxRuntime().plan(cluster(cabling, Map.of()));
        assertThat(open.machines().getFirst().daemons()).hasSize(1);
        assertThat(open.machines().getFirst().daemons().getFirst().daemon().programArguments()).containsSubsequence("--host", "10.0.0.1", "--port", "8080");
        assertThat(open.notes()).anySatisfy(note -> assertThat(note).startsWith("no API key"));
    }

    @Test
    void theContractCheckRefusesAsMlxDoes() {
        String file = "/usr/local/macfleet/mlx/ibv-devices.json";
        Map<String, String> good = Map.of("MLX_RANK", "1", "MLX_JACCL_COORDINATOR", "10.0.0.1:32323", "MLX_IBV_DEVICES", file);
        String matrix = "[[null, \"rdma_en2\"], [\"rdma_en3\", null]]\n";
        assertThat(io.macfleet.simulator.MlxRankStart.check(good, path -> Optional.of(matrix), List.of("rdma_en3"))).isEmpty();
        // rdma.cpp:315-319.
        assertThat(io.macfleet.simulator.MlxRankStart.check(good, path -> Optional.of(matrix), List.of("rdma_en2")))
                .hasValue("[jaccl] Could not find device rdma_en3 (1 available)");
        // jaccl.cpp:33-38.
        assertThat(io.macfleet.simulator.MlxRankStart.check(good, path -> Optional.of("[[null, \"rdma_en2\"], [\"rdma_en3\"]]"), List.of("rdma_en3")))
                .hasValue("[jaccl] The device file should contain the connectivity of each rank to all other ranks but rank 1 contains only 1 entries.");
        // jaccl.cpp:141-181 (an off-diagonal entry missing: neither a mesh nor a ring), 246-252 (the message).
        assertThat(io.macfleet.simulator.MlxRankStart.check(good, path -> Optional.of("[[null, null], [\"rdma_en3\", null]]"), List.of("rdma_en3")))
                .hasValueSatisfying(message -> assertThat(message).contains("You need to provide via environment variables a rank"));
        // jaccl.cpp:177-179: a rank outside the matrix.
        Map<String, String> rankTwo = new HashMap<>(good);
        rankTwo.put("MLX_RANK", "2");
        assertThat(io.macfleet.simulator.MlxRankStart.check(rankTwo, path -> Optional.of(matrix), List.of("rdma_en3"))).isPresent();
        // jaccl.cpp:179: no coordinator; distributed.cpp:199-201.
        assertThat(io.macfleet.simulator.MlxRankStart.check(Map.of("MLX_RANK", "0", "MLX_IBV_DEVICES", file), path -> Optional.of(matrix), List.of()))
                .hasValueSatisfying(message -> assertThat(message).startsWith("[distributed] Couldn't initialize any backend"));
        // ring.cpp:829-836.
        assertThat(io.macfleet.simulator.MlxRankStart.check(Map.of("MLX_HOSTFILE", "/h.json"), path -> Optional.of("[]"), List.of()))
                .hasValueSatisfying(message -> assertThat(message).startsWith("[ring] You need to provide via environment variables both a rank"));
        // ring.cpp:354-357.
        assertThat(io.macfleet.simulator.MlxRankStart.check(Map.of("MLX_HOSTFILE", "/h.json", "MLX_RANK", "3"), path -> Optional.of("[[\"a:1\"], [\"b:2\"]]"), List.of()))
                .hasValue("[ring] Rank cannot be larger than the size of the group");
        // launch.py:374-375.
        assertThatThrownBy(() -> MlxLaunchContract.jacclEnvironment(0, "", 32323, file, false))
                .hasMessageContaining("Rank 0 should have an IP reachable from all other ranks");
        // launch.py:378-381.
        assertThatThrownBy(() -> MlxLaunchContract.deviceFile(List.of(java.util.Arrays.asList("rdma_en2", "rdma_en3"), java.util.Arrays.asList("rdma_en3", null))))
                .hasMessageContaining("Malformed hostfile for jaccl backend");
        // launch.py:314: a single host gets an empty hostfile.
        assertThat(MlxLaunchContract.ringHostfile(List.of(List.of("192.168.0.1")), 32323)).isEqualTo("\n");
    }

    @Test
    void mlxsRdmaFailuresInTheLogAreRdmaFaults() {
        List<Pattern> lines = new MlxRuntime().rdmaFaultLines();
        // rdma.cpp:266 (RTR), 280 (RTS) with errno 22 (EINVAL) and 60 (ETIMEDOUT), as exo #1847 and mlx #4319 show them.
        assertThat(matches(lines, "RuntimeError: [jaccl] Changing queue pair to RTR failed with errno 22")).isTrue();
        assertThat(matches(lines, "[jaccl] Changing queue pair to RTS failed with errno 60")).isTrue();
        // tcp.cpp:199 and utils.cpp:193 (tag then "Couldn't connect").
        assertThat(matches(lines, "RuntimeError: [jaccl] Couldn't connect (error: 61)")).isTrue();
        assertThat(matches(lines, "Fatal Python error: Segmentation fault ... in librdma.dylib")).isTrue();
        assertThat(matches(lines, "2026-08-22 10:00:00 - INFO - Starting httpd at 10.0.0.1 on port 8080...")).isFalse();
        assertThat(matches(lines, "[jaccl] Changing queue pair to RTR failed with errno 12")).isFalse();
    }

    @Test
    void theDemoSwitchesItsFirstClusterToMlxWithAModelDirectory() throws Exception {
        String yaml = "clusters:\n  - name: llm-a\n    inference:\n      model: \"/x/tiny.gguf\"\n      parallelism: tensor\n      port: 8080\n"
                + "  - name: llm-b\n    inference:\n      model: \"/x/tiny.gguf\"\n";
        Path demoModel = DemoMlx.demoModel(directory);
        String switched = DemoMlx.withMlx(yaml, "llm-a", demoModel);
        assertThat(switched).contains("    inference:\n      runtime: mlx\n      model: \"" + demoModel + "\"\n      settings:\n        mlxVersion: \"0.29.3\"")
                .contains("  - name: llm-b\n    inference:\n      model: \"/x/tiny.gguf\"");
        assertThat(switched.indexOf("tiny.gguf")).isEqualTo(switched.lastIndexOf("tiny.gguf"));
        assertThat(MlxModel.of(demoModel).files()).hasSize(2);
        // The demo's models directory is <demo>/models (macfleet.home/models): the MLX model must lie there, or the
        // deploy refuses it (issue 29's models-directory rule stopped `demo --runtime mlx` once).
        new io.macfleet.deployment.ModelsDirectory(directory.resolve("models")).confine(demoModel);
    }

    private static boolean matches(List<Pattern> patterns, String line) {
        return patterns.stream().anyMatch(pattern -> pattern.matcher(line).find());
    }

    private static StagedFile written(MachinePlan machine, String path) {
        return machine.files().stream().filter(file -> file.destination().equals(path)).findFirst().orElseThrow();
    }

    private static List<String> devicesOf(ClusterCabling.Cluster cabling, String machine) {
        return cabling.facts().stream().filter(fact -> fact.machine().equals(machine)).findFirst().orElseThrow().rdmaDevices().orElseThrow();
    }

    private RuntimeCluster cluster(ClusterCabling.Cluster cabling, Map<String, Object> settings) {
        return cluster(cabling, settings, InferenceSettings.Parallelism.TENSOR);
    }

    private RuntimeCluster cluster(ClusterCabling.Cluster cabling, Map<String, Object> settings, InferenceSettings.Parallelism parallelism) {
        return cluster(cabling, settings, parallelism, true);
    }

    private RuntimeCluster cluster(ClusterCabling.Cluster cabling, Map<String, Object> settings, InferenceSettings.Parallelism parallelism,
                                   boolean withVersions) {
        Map<String, Object> all = new LinkedHashMap<>();
        if (withVersions) {
            all.put("mlxVersion", "0.29.3");
            all.put("mlxLmVersion", "0.28.2");
        }
        all.putAll(settings);
        List<RuntimeCluster.Machine> machines = new ArrayList<>();
        List<String> names = cabling.plan().machines();
        for (int rank = 0; rank < names.size(); rank++) {
            String name = names.get(rank);
            machines.add(new RuntimeCluster.Machine(rank, name, SshTarget.of(name, "10.0.0." + (rank + 1), "admin",
                    io.macfleet.secrets.SecretReference.of("env:MACFLEET_NONE")), "10.0.0." + (rank + 1), 512, Map.of()));
        }
        return new RuntimeCluster("llm-a", new InferenceSettings(null, parallelism, 8080, MlxRuntime.NAME, all), machines, Optional.of(model),
                Optional.empty(), List.of(), Optional.of(cabling));
    }
}
