package io.macfleet.runtime;

import static io.macfleet.runtime.LlamaCppOnSimulatorTest.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.NodeJars;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import io.macfleet.supervision.RuntimeRdmaReboot;
import io.macfleet.supervision.SshMachineShell;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The llama.cpp runtime's lifecycle on three simulated Macs running the REAL llama.cpp programs: the lockstep upgrade
 * from one build to another (drained, verified, rolled back when the new build does not serve), version skew refused
 * before anything changes, and an RDMA fault in a daemon's log answered by the coordinated reboot. The "builds" are the
 * one llama.cpp build of .ci/llama-cpp.sh under different directories: build A as built, build B whose llama-server is a
 * small script reporting another build number and running the real program, build C the same but failing at start.
 * Skipped without a llama.cpp build, failed then when CI=true.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LlamaCppUpgradeOnSimulatorTest {

    static final String BUILD_A = "0.5.0-dev build 1";
    static final String BUILD_B = "0.5.1-test build 2 (b2b2b2b)";
    static final List<String> NAMES = List.of("studio-01", "studio-02", "studio-03");

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;
    static RuntimeService runtimes;
    static SshSettings settings;
    static Path inventory;
    static Path buildA;
    static Path buildB;
    static Path buildC;

    @BeforeAll
    static void start() throws Exception {
        buildA = LlamaCppBuild.required();
        buildB = wrapped(buildA, directory.resolve("build-b"), "0.5.1-test", 2, "b2b2b2b", false);
        buildC = wrapped(buildA, directory.resolve("build-c"), "0.5.2-test", 3, "c3c3c3c", true);
        simulation = SimulatedInventory.start(directory, 3, "127.0.147.11");
        simulation.cableFullMesh(NAMES);
        simulation.fleet.assignThunderboltLoopbackAddresses();
        Path model = NodeJars.tinyModel(directory, 11);
        inventory = SimulatedRuntimes.runtimeInventory(simulation, NAMES, "llama.cpp", SimulatedRuntimes.freePort(), model, """
                build: %s
                rpcPort: %d
                threads: 1
                context: 256
                """.formatted(buildA, SimulatedRuntimes.freePort()));
        settings = SimulatedInventory.settings(Duration.ofSeconds(60));
        runtimes = SimulatedRuntimes.serviceFor(simulation, inventory, settings);
        runtimes.deploy("llm-a", Optional.empty(), settings, NodeDeployer.Listener.NONE);
        assertThat(chat(runtimes.endpoint("llm-a"), "")).isEqualTo(200);
    }

    @AfterAll
    static void stop() {
        if (simulation != null) {
            simulation.close();
        }
    }

    @Test
    @Order(1)
    void theUpgradeInstallsTheNewBuildOnEveryMacDrainsStartsInOrderAndServes() throws Exception {
        useBuild(buildB);
        RuntimeUpgrade.Preview preview = runtimes.upgradePreview("llm-a", settings);
        assertThat(preview.machines()).extracting(RuntimeUpgrade.MachineChange::machine).containsExactlyElementsOf(NAMES);
        assertThat(preview.machines()).allSatisfy(machine -> assertThat(machine.from()).startsWith(BUILD_A));
        assertThat(preview.text()).contains("studio-02: " + BUILD_A);

        List<String> steps = new java.util.concurrent.CopyOnWriteArrayList<>();
        long started = System.nanoTime();
        RuntimeUpgrade.Outcome outcome = runtimes.upgrade("llm-a", settings, new NodeDeployer.Listener() {
            @Override
            public void step(String machine, String what) {
                steps.add(machine + " " + what);
            }
        });
        System.out.printf("lockstep upgrade of llama.cpp on 3 simulated Macs (A -> B): %.1f s%n", (System.nanoTime() - started) / 1e9);
        assertThat(outcome.upgraded()).isTrue();
        assertThat(outcome.summary()).contains("from " + BUILD_A).contains("to llama.cpp " + BUILD_B);
        // Installed and verified everywhere before the drain; drained head first; rpc-servers started before the head.
        assertThat(steps).containsSubsequence("studio-03 reading the build", "studio-01 draining: stopping " + LlamaCppRuntime.SERVER_LABEL);
        assertThat(steps).containsSubsequence("studio-02 starting " + LlamaCppRuntime.RPC_LABEL, "studio-01 starting " + LlamaCppRuntime.SERVER_LABEL);
        assertThat(chat(runtimes.endpoint("llm-a"), "")).isEqualTo(200);
        RuntimeUpgrade.Preview after = runtimes.upgradePreview("llm-a", settings);
        assertThat(after.machines()).allSatisfy(machine -> assertThat(machine.from()).isEqualTo(BUILD_B));
        assertThat(after.changes()).isFalse();
        assertThat(runtimes.upgrade("llm-a", settings, NodeDeployer.Listener.NONE).summary()).startsWith("nothing to upgrade");
    }

    @Test
    @Order(2)
    void macsThatWouldRunDifferentBuildsAreRefusedBeforeAnythingChangesNamingEachMacsBuild() throws Exception {
        useBuild(buildA);
        Map<String, Long> pids = pids();
        // studio-03 runs something other than the copied, checked llama-server (here: build B's), as a Mac that finds
        // another copy first would.
        simulation.fleet.machine("studio-03").faults().replaceProgram("llama-server", buildB.resolve("llama-server"));
        try {
            assertThatThrownBy(() -> runtimes.upgrade("llm-a", settings, NodeDeployer.Listener.NONE))
                    .isInstanceOf(RuntimeRefused.class)
                    .hasMessageContaining("the Macs would run different llama.cpp builds")
                    .hasMessageContaining("studio-01 " + BUILD_A).hasMessageContaining("studio-02 " + BUILD_A)
                    .hasMessageContaining("studio-03 " + BUILD_B).hasMessageContaining("nothing was switched");
        } finally {
            simulation.fleet.machine("studio-03").faults().restorePrograms();
        }
        assertThat(pids()).as("no daemon was stopped or started").isEqualTo(pids);
        assertThat(chat(runtimes.endpoint("llm-a"), "")).isEqualTo(200);
        assertThat(runtimes.upgradePreview("llm-a", settings).machines()).allSatisfy(machine -> assertThat(machine.from()).isEqualTo(BUILD_B));
    }

    @Test
    @Order(3)
    void aNewBuildThatDoesNotServeIsRolledBackToThePreviousBuildOnEveryMac() throws Exception {
        useBuild(buildC);
        runtimes.readyTimeout(Duration.ofSeconds(15));
        try {
            assertThatThrownBy(() -> runtimes.upgrade("llm-a", settings, NodeDeployer.Listener.NONE))
                    .isInstanceOf(NodeDeployer.DeployFailedException.class)
                    .hasMessageContaining("to llama.cpp 0.5.2-test build 3 (c3c3c3c) failed")
                    .hasMessageContaining("rolled back: every Mac runs " + BUILD_B + " again");
        } finally {
            runtimes.readyTimeout(Duration.ofSeconds(120));
        }
        assertThat(chat(runtimes.endpoint("llm-a"), "")).isEqualTo(200);
        assertThat(runtimes.upgradePreview("llm-a", settings).machines()).allSatisfy(machine -> assertThat(machine.from()).isEqualTo(BUILD_B));
        assertThat(runtimes.status("llm-a", settings)).allSatisfy(daemon -> assertThat(daemon.ready()).as(daemon.toString()).isTrue());
    }

    @Test
    @Order(4)
    void anRdmaFaultInTheLogsWithoutTheRebootPolicyIsAnAlertRecommendingTheReboot() throws Exception {
        RuntimeSupervisor supervisor = supervisor(false);
        try (SshRun run = transport().openRun()) {
            assertThat(supervisor.round(run)).isInstanceOf(RuntimeSupervisor.Decision.Serving.class);
            simulation.fleet.machine("studio-02").faults().setRdmaWedged(true);
            simulation.fleet.crashDaemon("studio-02", LlamaCppRuntime.RPC_LABEL);
            awaitFaultLine("studio-02", LlamaCppRuntime.RPC_LABEL);
            RuntimeSupervisor.Decision decision = awaitRdma(supervisor, run);
            assertThat(decision).isInstanceOf(RuntimeSupervisor.Decision.RdmaFailure.class);
            RuntimeSupervisor.Decision.RdmaFailure rdma = (RuntimeSupervisor.Decision.RdmaFailure) decision;
            assertThat(rdma.rebootNow()).isFalse();
            assertThat(rdma.evidence()).anyMatch(line -> line.startsWith("studio-02 " + LlamaCppRuntime.RPC_LABEL + ": ggml_rpc: RDMA transport error"));
            assertThat(rdma.message()).contains("Recommended: reboot every Mac of the cluster together", "supervision.rdmaFailure: reboot");
            assertThat(supervisor.round(run)).as("raised once, no restart of a wedged daemon").isInstanceOf(RuntimeSupervisor.Decision.Alert.class);
        } finally {
            simulation.fleet.machine("studio-02").faults().setRdmaWedged(false);
        }
    }

    @Test
    @Order(5)
    void anRdmaFaultWithTheRebootPolicyRebootsEveryMacAndStartsRpcServersBeforeTheHead() throws Exception {
        RuntimeSupervisor supervisor = supervisor(true);
        try (SshRun run = transport().openRun()) {
            // The Mac is still wedged from the test before (the fault cleared, its daemon never restarted since).
            simulation.fleet.machine("studio-02").faults().setRdmaWedged(true);
            simulation.fleet.crashDaemon("studio-02", LlamaCppRuntime.RPC_LABEL);
            RuntimeSupervisor.Decision decision = awaitRdma(supervisor, run);
            assertThat(decision).isInstanceOf(RuntimeSupervisor.Decision.RdmaFailure.class);
            assertThat(((RuntimeSupervisor.Decision.RdmaFailure) decision).rebootNow()).isTrue();
            assertThat(supervisor.round(run)).isInstanceOf(RuntimeSupervisor.Decision.Recovering.class);
            List<RuntimeSupervisor.Daemon> order = supervisor.rebootOrder();
            assertThat(order.getLast()).isEqualTo(new RuntimeSupervisor.Daemon("studio-01", 0, LlamaCppRuntime.SERVER_LABEL));
            Map<String, SshTarget> targets = new LinkedHashMap<>();
            runtimes.plan("llm-a", Optional.empty(), Optional.empty()).machines().forEach(machine -> targets.put(machine.machine(), machine.ssh()));
            long started = System.nanoTime();
            try (SshMachineShell shell = new SshMachineShell(transport(), targets)) {
                RuntimeRdmaReboot.run("llm-a", order, shell, Duration.ofSeconds(30), Duration.ofSeconds(120));
            }
            supervisor.rebooted(Optional.empty());
            assertThat(simulation.fleet.machine("studio-02").faults().rdmaWedged()).as("a reboot clears the wedged state").isFalse();
            long deadline = System.nanoTime() + 90_000_000_000L;
            RuntimeSupervisor.Decision after = supervisor.round(run);
            while (!(after instanceof RuntimeSupervisor.Decision.Serving) && System.nanoTime() < deadline) {
                Thread.sleep(500);
                after = supervisor.round(run);
            }
            System.out.printf("RDMA fault on 3 simulated Macs: rebooted and serving again after %.1f s%n", (System.nanoTime() - started) / 1e9);
            assertThat(after).isInstanceOf(RuntimeSupervisor.Decision.Serving.class);
            assertThat(chat(runtimes.endpoint("llm-a"), "")).isEqualTo(200);
        } finally {
            simulation.fleet.machine("studio-02").faults().setRdmaWedged(false);
        }
    }

    /** Rounds until the supervisor reads the fault (launchd restarts the wedged daemon, which logs the fault line again). */
    private static RuntimeSupervisor.Decision awaitRdma(RuntimeSupervisor supervisor, SshRun run) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        RuntimeSupervisor.Decision decision = supervisor.round(run);
        while (!(decision instanceof RuntimeSupervisor.Decision.RdmaFailure) && System.nanoTime() < deadline) {
            Thread.sleep(500);
            decision = supervisor.round(run);
        }
        return decision;
    }

    private static RuntimeSupervisor supervisor(boolean rebootOnRdmaFailure) {
        RuntimePlan plan = runtimes.plan("llm-a", Optional.empty(), Optional.empty());
        return new RuntimeSupervisor("llm-a", new LlamaCppRuntime(), plan.machines().stream().map(RuntimePlan.MachinePlan::ssh).toList(),
                Duration.ofSeconds(60), Clock.systemUTC(), rebootOnRdmaFailure);
    }

    private static Map<String, Long> pids() {
        Map<String, Long> pids = new LinkedHashMap<>();
        runtimes.status("llm-a", settings).forEach(daemon -> pids.put(daemon.machine() + " " + daemon.label(), daemon.launchd().pid().orElse(-1)));
        return pids;
    }

    /** Points the inventory's llama.cpp build at {@code build} and applies it. */
    private static void useBuild(Path build) throws Exception {
        Path yaml = inventory.resolve("macfleet.yaml");
        Files.writeString(yaml, Files.readString(yaml).replaceAll("(?m)^(\\s+build: ).*$", "$1" + java.util.regex.Matcher.quoteReplacement(build.toString())));
        LoadResult loaded = InventoryLoader.load(inventory);
        assertThat(loaded.errors()).isEmpty();
        simulation.desiredState.apply(loaded.inventory(), "test", inventory.toString());
    }

    /**
     * Another "build" of the same binaries: every file copied, llama-server moved aside (as a .so, so that the runtime
     * copies it with the libraries) and replaced by a script that reports this build number and runs the real program,
     * or fails at start ({@code broken}).
     */
    static Path wrapped(Path real, Path into, String version, int number, String commit, boolean broken) throws Exception {
        Files.createDirectories(into);
        try (Stream<Path> files = Files.list(real)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                Path target = into.resolve(file.getFileName().toString().equals("llama-server") ? "llama-server-real.so" : file.getFileName().toString());
                Files.copy(file, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        Path script = into.resolve("llama-server");
        Files.writeString(script, """
                #!/bin/sh
                # A test fixture (not llama.cpp's): build %d of the upgrade test, the real llama-server under another build number.
                if [ "$1" = "--version" ]; then
                  echo "version: %s (build %d, commit %s)"
                  echo "built with the upgrade test's wrapper"
                  exit 0
                fi
                %s
                """.formatted(number, version, number, commit, broken ? "echo 'llama_server: initializing ...' >&2; echo 'error: this build is broken on purpose' >&2; exit 1"
                : "exec " + loader() + " \"$(dirname \"$0\")/llama-server-real.so\" \"$@\""));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        return into;
    }

    /**
     * This host's dynamic loader: the runtime copies the moved program with the libraries' mode (not executable), and the
     * loader runs an ELF program whatever its mode.
     */
    static String loader() {
        return Stream.of("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1").filter(path -> Files.exists(Path.of(path))).findFirst()
                .orElseThrow(() -> new IllegalStateException("no dynamic loader found for the wrapped llama-server"));
    }

    /** Waits until the wedged daemon has logged its RDMA fault (launchd starts it again after its throttle interval). */
    static void awaitFaultLine(String machine, String label) throws Exception {
        Path log = simulation.fleet.machine(machine).resolve("/var/log/macfleet/" + label + ".err.log");
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!(Files.exists(log) && Files.readString(log).contains("RDMA transport error")) && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
    }

    static SshTransport transport() {
        return new SshTransport(settings, new InMemoryHostKeyStore(), event -> {
        }, Clock.systemUTC());
    }
}
