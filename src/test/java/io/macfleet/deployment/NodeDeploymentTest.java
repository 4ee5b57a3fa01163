package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SshKeys;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node deployed to four simulated Macs: the real node jar runs as each Mac's launch daemon and the four ranks form
 * a tensor-parallel cluster over loopback. Starting four JVMs is dear on a small machine, so the class deploys once,
 * then checks what a redeploy, a crash in the middle of the switch, a full disk and an interrupted copy do.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeDeploymentTest {

    @TempDir
    static Path directory;
    static SimulatedFleet fleet;
    static SshTransport transport;
    static List<RankTarget> ranks;
    static NodeRelease release;
    static int port;

    @BeforeAll
    static void startFleet() throws Exception {
        KeyPair key = SshKeys.generate();
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "test");
        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic()).basePort(0);
        for (int i = 1; i <= 4; i++) {
            builder.macStudio("studio-0" + i, i <= 2 ? 512 : 256, "26.2");
        }
        fleet = builder.build().start();
        transport = new SshTransport(SshSettings.defaults("test").withAcceptNewHostKeys(true), new InMemoryHostKeyStore(), event -> {
        });
        port = freePortRange(8);
        ranks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String name = "studio-0" + (i + 1);
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(name);
            SshTarget target = SshTarget.of(name, endpoint.host(), fleet.sshUser(), SecretReference.of("file:" + keyFile)).withPort(endpoint.port());
            ranks.add(RankTarget.of(i, name, target, endpoint.host(), i < 2 ? 512 : 256, port));
        }
        release = NodeRelease.of(NodeJars.nodeJar(), NodeJars.tinyModel(directory, 7));
    }

    @AfterAll
    static void stopFleet() {
        if (fleet != null) {
            fleet.close();
        }
    }

    static NodeDeployer.Plan plan(NodeRelease release, int threads) {
        String clusterFile = NodeClusterConfig.render("llm-a", "tensor", ranks, List.of());
        return new NodeDeployer.Plan("llm-a", "tensor", ranks, release, clusterFile, List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"), threads)
                .withKeys(keys());
    }

    /** The cluster's keys on the control host, as the service keeps them. */
    static NodeKeys keys() {
        return NodeKeys.of(directory.resolve("node-keys"), "llm-a");
    }

    static NodeDeployer deployer() {
        return new NodeDeployer(Duration.ofSeconds(240));
    }

    @Test
    @Order(1)
    void deploysToAFreshClusterWhichAnswersAChatCompletionThenARedeployDoesNothing() throws Exception {
        Map<String, Long> progress = new ConcurrentHashMap<>();
        NodeDeployer.Outcome first;
        try (SshRun run = transport.openRun()) {
            first = deployer().deploy(run, plan(release, 1), new NodeDeployer.Listener() {
                @Override
                public void copying(String machine, String file, long done, long total) {
                    progress.merge(machine + " " + file, done, Math::max);
                }
            }, NodeDeployer.Journal.NONE);
        }
        assertThat(first.switched()).isTrue();
        assertThat(first.staged()).allSatisfy(staged -> assertThat(staged.model()).isEqualTo(CopyOutcome.Kind.COPIED));
        assertThat(progress).containsEntry("studio-03 model", release.modelSize());
        assertThat(first.endpoint()).isEqualTo("http://" + ranks.getFirst().managementAddress() + ":" + port + "/v1");

        HttpResponse<String> chat = chat(first.endpoint(), keys().apiKeyFile());
        assertThat(chat.statusCode()).as(chat.body()).isEqualTo(200);
        assertThat(chat.body()).contains("\"chat.completion\"", "\"finish_reason\"");
        // The endpoint asks for the cluster's key; the keys are on every Mac for the daemon alone, named by path only.
        assertThat(chat(first.endpoint(), null).statusCode()).isEqualTo(401);
        String apiKey = Files.readString(keys().apiKeyFile()).strip();
        String meshKey = Files.readString(keys().meshKeyFile()).strip();
        for (RankTarget rank : ranks) {
            var mac = fleet.machine(rank.machine());
            assertThat(Files.getPosixFilePermissions(mac.resolve(NodeKeys.MESH_KEY_ON_MAC)))
                    .containsExactlyInAnyOrder(java.nio.file.attribute.PosixFilePermission.OWNER_READ, java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
            assertThat(Files.readString(mac.resolve(NodeKeys.API_KEY_ON_MAC)).strip()).isEqualTo(apiKey);
            String plist = Files.readString(mac.resolve(NodeLayout.PLIST));
            assertThat(plist).doesNotContain(apiKey).doesNotContain(meshKey).doesNotContain("0.0.0.0")
                    .contains("<string>--host</string>\n\t\t<string>" + rank.managementAddress() + "</string>")
                    .contains("<string>--model-sha256</string>\n\t\t<string>" + release.modelSha256() + "</string>");
        }

        List<NodeRankStatus> before = statuses();
        assertThat(before).allSatisfy(status -> {
            assertThat(status.running()).as(status.toString()).isTrue();
            assertThat(status.nodeSha256()).hasValue(release.nodeSha256());
            assertThat(status.modelSha256()).hasValue(release.modelSha256());
            assertThat(status.runs()).hasValue(1);
        });

        NodeDeployer.Outcome again;
        try (SshRun run = transport.openRun()) {
            again = deployer().deploy(run, plan(release, 1), NodeDeployer.Listener.NONE, NodeDeployer.Journal.NONE);
        }
        assertThat(again.switched()).isFalse();
        assertThat(again.summary()).startsWith("nothing to do");
        assertThat(again.staged()).allSatisfy(staged -> {
            assertThat(staged.jar()).isEqualTo(CopyOutcome.Kind.ALREADY_PRESENT);
            assertThat(staged.model()).isEqualTo(CopyOutcome.Kind.ALREADY_PRESENT);
        });
        List<NodeRankStatus> after = statuses();
        for (int i = 0; i < 4; i++) {
            assertThat(after.get(i).pid()).isEqualTo(before.get(i).pid());
        }
    }

    /**
     * Least privilege (issue 29): the daemon runs as its own hidden account, which the deploy created; what it runs is
     * root's and the SSH user cannot replace it, by SFTP or by a command; the keys are the daemon account's alone.
     */
    @Test
    @Order(2)
    void theDaemonRunsAsItsOwnAccountAndTheSshUserCannotReplaceWhatItRuns() throws Exception {
        for (RankTarget rank : ranks) {
            var mac = fleet.machine(rank.machine());
            assertThat(mac.launchd().userOf(NodeLayout.LABEL)).hasValue(DaemonAccount.NAME);
            assertThat(Files.readString(mac.resolve(NodeLayout.PLIST))).contains("<key>UserName</key>\n\t<string>_macfleet</string>");
            assertThat(mac.ownerOf(NodeLayout.NODE_DIRECTORY)).isEqualTo("root:wheel 755");
            assertThat(mac.ownerOf(NodeLayout.MODEL_DIRECTORY)).isEqualTo("root:wheel 755");
            assertThat(mac.ownerOf(release.jarPath())).isEqualTo("root:wheel 644");
            assertThat(mac.ownerOf(release.modelPath())).isEqualTo("root:wheel 644");
            assertThat(mac.ownerOf(NodeLayout.PLIST)).isEqualTo("root:wheel 644");
            assertThat(mac.ownerOf(NodeKeys.MESH_KEY_ON_MAC)).isEqualTo("_macfleet:_macfleet 600");
            assertThat(mac.ownerOf(NodeKeys.API_KEY_ON_MAC)).isEqualTo("_macfleet:_macfleet 600");
        }
        Path jarOnMac = fleet.machine("studio-01").resolve(release.jarPath());
        byte[] jarBefore = Files.readAllBytes(jarOnMac);
        try (SshRun run = transport.openRun()) {
            var results = run.onFleet(List.of(ranks.getFirst().ssh()), machine -> {
                assertThat(machine.execute(io.macfleet.ssh.Command.reading("stat", "-f", "%Su:%Sg %Lp", release.jarPath())).stdout())
                        .isEqualTo("root:wheel 644\n");
                assertThat(machine.execute(io.macfleet.ssh.Command.reading("dscl", ".", "-read", "/Users/" + DaemonAccount.NAME, "UserShell",
                        "NFSHomeDirectory", "IsHidden")).stdout()).isEqualTo("UserShell: /usr/bin/false\nNFSHomeDirectory: /var/empty\nIsHidden: 1\n");
                int uid = Integer.parseInt(machine.execute(io.macfleet.ssh.Command.reading("dscl", ".", "-read", "/Users/" + DaemonAccount.NAME,
                        "UniqueID")).stdout().replaceAll("\\D", ""));
                assertThat(uid).isBetween(DaemonAccount.LOWEST_ID, DaemonAccount.HIGHEST_ID);
                // Over SFTP: overwrite it, or put another file in its place.
                assertThatThrownBy(() -> machine.upload(release.jarPath(), "not the node".getBytes(), 0644)).hasMessageContaining("ermission denied");
                assertThatThrownBy(() -> machine.upload(NodeLayout.NODE_DIRECTORY + "/evil.jar", "not the node".getBytes(), 0644))
                        .hasMessageContaining("ermission denied");
                // By commands without sudo.
                io.macfleet.ssh.CommandResult moved = machine.execute(io.macfleet.ssh.Command.of("mv", "-f", NodeLayout.errorLog(), release.jarPath()));
                assertThat(moved.exitStatus()).isEqualTo(1);
                assertThat(moved.stderr()).contains("Permission denied");
                assertThat(machine.execute(io.macfleet.ssh.Command.of("rm", "-f", release.jarPath())).stderr()).contains("Permission denied");
                assertThat(machine.execute(io.macfleet.ssh.Command.of("chmod", "666", release.jarPath())).stderr()).contains("Operation not permitted");
                assertThat(machine.execute(io.macfleet.ssh.Command.of("cat", NodeKeys.API_KEY_ON_MAC)).stderr()).contains("Permission denied");
                return null;
            });
            assertThat(results).allSatisfy(result -> assertThat(result.succeeded()).as(result.describe()).isTrue());
        }
        assertThat(Files.readAllBytes(jarOnMac)).isEqualTo(jarBefore);
        assertThat(fleet.machine("studio-01").resolve(NodeLayout.NODE_DIRECTORY + "/evil.jar")).doesNotExist();
        assertThat(fleet.machine("studio-01").ownerOf(release.jarPath())).isEqualTo("root:wheel 644");
    }

    @Test
    @Order(3)
    void aDeployThatDiesInTheMiddleOfTheSwitchEndsTheSameWhenRunAgain() throws Exception {
        // Another setting (one more thread per rank) changes every rank's definition. The deployment dies (as macfleet
        // under kill -9) once two ranks were started again: the cluster is half switched.
        NodeDeployer.Plan changed = plan(release, 2);
        AtomicBoolean died = new AtomicBoolean();
        try (SshRun run = transport.openRun()) {
            assertThatThrownBy(() -> deployer().deploy(run, changed, new NodeDeployer.Listener() {
                @Override
                public void step(String machine, String what) {
                    if (what.startsWith("starting") && machine.equals("studio-03")) {
                        died.set(true);
                        throw new IllegalStateException("macfleet killed");
                    }
                }
            }, NodeDeployer.Journal.NONE)).isInstanceOf(NodeDeployer.DeployFailedException.class).hasMessageContaining("studio-03: macfleet killed");
        }
        assertThat(died).isTrue();
        assertThat(fleet.machine("studio-03").launchd().labels()).doesNotContain(NodeLayout.LABEL);

        NodeDeployer.Outcome resumed;
        try (SshRun run = transport.openRun()) {
            resumed = deployer().deploy(run, changed, NodeDeployer.Listener.NONE, NodeDeployer.Journal.NONE);
        }
        assertThat(resumed.switched()).isTrue();
        assertThat(chat(resumed.endpoint(), keys().apiKeyFile()).statusCode()).isEqualTo(200);
        assertThat(statuses()).allSatisfy(status -> assertThat(status.running()).as(status.toString()).isTrue());
        String plist = Files.readString(fleet.machine("studio-03").resolve(NodeLayout.PLIST));
        assertThat(plist).contains("<string>--threads</string>\n\t\t<string>2</string>");
    }

    @Test
    @Order(4)
    void aDiskTooFullForTheModelIsRefusedNamingTheMachineAndNothingIsSwitched() throws Exception {
        NodeRelease bigger = NodeRelease.of(NodeJars.nodeJar(), NodeJars.tinyModel(directory, 8));
        fleet.machine("studio-04").faults().setDiskAvailableKilobytes(100);
        List<NodeRankStatus> before = statuses();
        try (SshRun run = transport.openRun()) {
            assertThatThrownBy(() -> deployer().deploy(run, plan(bigger, 2), NodeDeployer.Listener.NONE, NodeDeployer.Journal.NONE))
                    .isInstanceOf(NodeDeployer.DeployFailedException.class)
                    .hasMessageContaining("nothing was switched")
                    .hasMessageContaining("studio-04: not enough disk space for the model " + bigger.modelFileName())
                    .hasMessageContaining("102400 bytes available");
        } finally {
            fleet.machine("studio-04").faults().setDiskAvailableKilobytes(-1);
        }
        List<NodeRankStatus> after = statuses();
        for (int i = 0; i < 4; i++) {
            assertThat(after.get(i).pid()).isEqualTo(before.get(i).pid());
            assertThat(after.get(i).modelSha256()).hasValue(release.modelSha256());
        }
    }

    @Test
    @Order(5)
    void anInterruptedModelCopyResumesWhereItStopped() throws Exception {
        NodeRelease bigger = NodeRelease.of(NodeJars.nodeJar(), NodeJars.tinyModel(directory, 9));
        NodeDeployer.Plan plan = plan(bigger, 2);
        try (SshRun run = transport.openRun()) {
            assertThatThrownBy(() -> deployer().stage(run, plan, new NodeDeployer.Listener() {
                @Override
                public void copying(String machine, String file, long done, long total) {
                    if (machine.equals("studio-02") && file.equals("model") && done > total / 2 && done < total) {
                        throw new IllegalStateException("connection lost");
                    }
                }
            })).isInstanceOf(NodeDeployer.DeployFailedException.class).hasMessageContaining("studio-02: connection lost");
        }
        Path partial = fleet.machine("studio-02").resolve(NodeLayout.staged(bigger.modelPath()) + ".partial");
        assertThat(Files.size(partial)).isGreaterThan(bigger.modelSize() / 2).isLessThan(bigger.modelSize());
        List<NodeDeployer.Staged> staged;
        try (SshRun run = transport.openRun()) {
            staged = deployer().stage(run, plan, NodeDeployer.Listener.NONE);
        }
        assertThat(staged.get(1).model()).isEqualTo(CopyOutcome.Kind.RESUMED);
        assertThat(staged.get(0).model()).isEqualTo(CopyOutcome.Kind.ALREADY_PRESENT);
        assertThat(NodeRelease.sha256(fleet.machine("studio-02").resolve(bigger.modelPath()))).isEqualTo(bigger.modelSha256());
        assertThat(Files.exists(partial)).isFalse();
    }

    @Test
    @Order(6)
    void aMacWithoutJavaIsRefusedByNameOrGetsItFromTheOperatorsVerifiedPackage() throws Exception {
        fleet.machine("studio-02").removeJava();
        NodeDeployer.Plan plan = plan(release, 2);
        try (SshRun run = transport.openRun()) {
            assertThatThrownBy(() -> deployer().stage(run, plan, NodeDeployer.Listener.NONE))
                    .hasMessageContaining("studio-02: no Java runtime: `/usr/bin/java -version` answered 'The operation couldn");
        }
        Path javaPackage = directory.resolve("OpenJDK25U-jdk_aarch64_mac_hotspot.pkg");
        Files.writeString(javaPackage, "a package");
        assertThatThrownBy(() -> NodeDeployer.JavaPackage.verified(javaPackage, "0".repeat(64)))
                .hasMessageContaining("has SHA-256 " + NodeRelease.sha256(javaPackage) + ", not the " + "0".repeat(64));
        NodeDeployer.JavaPackage verified = NodeDeployer.JavaPackage.verified(javaPackage, NodeRelease.sha256(javaPackage));
        try (SshRun run = transport.openRun()) {
            List<NodeDeployer.Staged> staged = deployer().stage(run, plan.withJavaPackage(java.util.Optional.of(verified)), NodeDeployer.Listener.NONE);
            assertThat(staged).hasSize(4);
        }
        assertThat(fleet.machine("studio-02").hasJava()).isTrue();
        assertThat(Files.readString(fleet.machine("studio-02").resolve(verified.remotePath()))).isEqualTo("a package");
        assertThat(fleet.machine("studio-01").resolve(verified.remotePath())).doesNotExist();
    }

    @Test
    @Order(7)
    void aRankThatKeepsExitingEndsTheWaitAtOnceWithWhyFromItsLog() throws Exception {
        NodeRelease next = NodeRelease.of(NodeJars.nodeJar(), NodeJars.tinyModel(directory, 10));
        fleet.machine("studio-03").faults().crashLoop(NodeLayout.LABEL);
        try (SshRun run = transport.openRun()) {
            long started = System.nanoTime();
            // The wait would last 240 s; a rank that launchd starts again and again ends it as soon as it is seen.
            assertThatThrownBy(() -> deployer().deploy(run, plan(next, 2), NodeDeployer.Listener.NONE, NodeDeployer.Journal.NONE))
                    .isInstanceOf(NodeDeployer.DeployFailedException.class)
                    .hasMessageContaining("the cluster does not form: rank 2 on studio-03 is crash-looping (")
                    .hasMessageContaining("last exit 1")
                    // The last lines of the rank's log, newest last: why it exits.
                    .hasMessageContaining(", its log says: ")
                    .hasMessageEndingWith("| simulated crash");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(120));
            NodeRankStatus looping = statuses().get(2);
            assertThat(looping.state()).isEqualTo("crash-looping");
            assertThat(looping.running()).isFalse();
        } finally {
            fleet.machine("studio-03").faults().stopCrashLoops();
        }
    }

    /** Issue 29: a model that does not load (here a GGUF cut short) is found on one Mac before the switch; the running cluster stays. */
    @Test
    @Order(8)
    void aStagedModelThatDoesNotLoadSwitchesNothingAndSaysWhy() throws Exception {
        Path whole = NodeJars.tinyModel(directory, 11);
        byte[] bytes = Files.readAllBytes(whole);
        Path cut = Files.write(directory.resolve("cut-11.gguf"), java.util.Arrays.copyOf(bytes, bytes.length / 3));
        NodeRelease broken = NodeRelease.of(NodeJars.nodeJar(), cut);
        Map<String, String> plistsBefore = new java.util.HashMap<>();
        for (RankTarget rank : ranks) {
            plistsBefore.put(rank.machine(), Files.readString(fleet.machine(rank.machine()).resolve(NodeLayout.PLIST)));
        }
        try (SshRun run = transport.openRun()) {
            assertThatThrownBy(() -> deployer().deploy(run, plan(broken, 2), NodeDeployer.Listener.NONE, NodeDeployer.Journal.NONE))
                    .isInstanceOfSatisfying(NodeDeployer.DeployFailedException.class, failed -> assertThat(failed.switched()).isFalse())
                    .hasMessageContaining("the staged model cut-11.gguf does not load with node ")
                    .hasMessageContaining(" on studio-01 (exit 1), nothing was switched")
                    // The node's own words, from its output.
                    .hasMessageContaining("model " + broken.modelPath() + " does not load");
        }
        for (RankTarget rank : ranks) {
            assertThat(Files.readString(fleet.machine(rank.machine()).resolve(NodeLayout.PLIST))).as(rank.machine()).isEqualTo(plistsBefore.get(rank.machine()));
        }
    }

    /** Issue 29: the node checks its model's hash only at start; node status --verify-files names a file that changed since. */
    @Test
    @Order(9)
    void aModelFileThatChangedAfterTheDeployIsNamed() throws Exception {
        String model = after(Files.readString(fleet.machine("studio-02").resolve(NodeLayout.PLIST)), "--model");
        Path onMac = fleet.machine("studio-02").resolve(model);
        byte[] original = Files.readAllBytes(onMac);
        try (SshRun run = transport.openRun()) {
            assertThat(run.onFleet(List.of(ranks.get(1).ssh()), NodeDeployer::changedFiles).getFirst().value()).isEmpty();
            byte[] tampered = original.clone();
            tampered[tampered.length - 1] ^= 1;
            Files.write(onMac, tampered);
            List<String> changed = run.onFleet(List.of(ranks.get(1).ssh()), NodeDeployer::changedFiles).getFirst().value();
            assertThat(changed).singleElement().asString().startsWith("model " + model + " has SHA-256 ").contains("the file changed");
        } finally {
            Files.write(onMac, original);
        }
    }

    /** The argument after {@code option} in a plist's ProgramArguments. */
    private static String after(String plist, String option) throws Exception {
        List<String> arguments = LaunchDaemonPlist.parse(plist).programArguments();
        return arguments.get(arguments.indexOf(option) + 1);
    }

    static List<NodeRankStatus> statuses() {
        try (SshRun run = transport.openRun()) {
            return run.onFleet(ranks.stream().map(RankTarget::ssh).toList(),
                    machine -> NodeDeployer.status(machine, ranks.stream().filter(r -> r.machine().equals(machine.target().machine()))
                            .findFirst().orElseThrow().rank())).stream().map(result -> result.value()).toList();
        }
    }

    /** A chat completion with the bearer key in {@code apiKeyFile}, or none when it is null. */
    static HttpResponse<String> chat(String endpoint, Path apiKeyFile) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint + "/chat/completions"));
            if (apiKeyFile != null) {
                request.header("Authorization", "Bearer " + Files.readString(apiKeyFile).strip());
            }
            return client.send(request
                    .header("Content-Type", "application/json").timeout(Duration.ofSeconds(120))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":4,\"temperature\":0}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /** A port p with p..p+count-1 free now (see {@link NodeJars#freePortRange}). */
    static int freePortRange(int count) throws Exception {
        return NodeJars.freePortRange(count);
    }
}
