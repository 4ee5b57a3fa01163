package io.macfleet.models.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.audit.AuditEvent;
import io.macfleet.cli.PlainCommandLine;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.models.CatalogueModel;
import io.macfleet.models.ModelCatalogue;
import io.macfleet.models.ModelFile;
import io.macfleet.models.ModelLayout;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshRun;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A model held on a Mac ({@code model add --via studio-01}) placed on a 4-Mac cluster: studio-01's relay reads the file
 * from its own disk and heads the chain, the control host sends none of it. Four simulated Macs cabled as a full mesh,
 * real relay JVMs under the simulated launchd (base address 127.0.151.11).
 */
class MacFedPlacementTest {
    private static final int CHUNK = 1 << 20;
    private static final String HOLDER = "studio-01";
    private static final List<String> MACS = List.of("studio-01", "studio-02", "studio-03", "studio-04");

    @TempDir
    static Path directory;
    static SimulatedPlacement placement;
    static final List<AuditEvent> audit = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        placement = SimulatedPlacement.start(directory, 4, "127.0.151.11");
    }

    @AfterAll
    static void stop() {
        if (placement != null) {
            placement.close();
        }
    }

    /**
     * A catalogue of one model whose row says a Mac holds it (as {@code addVia} records it): its files are not on this
     * host, and {@link #localFile} names a path that does not exist, so reading it would fail.
     */
    static final class HeldOnAMac extends ModelCatalogue {
        final PlacedFile file;

        HeldOnAMac(PlacedFile file) {
            this.file = file;
        }

        @Override
        public Optional<CatalogueModel> find(String name) {
            return name.equals("held") ? Optional.of(new CatalogueModel("held", "gguf", "llama", "Q4_K_M",
                    List.of(new ModelFile(file.path().substring(13), file.size(), file.sha256())), file.size(), List.of("bundled"),
                    "hf:unsloth/Tiny-GGUF@0123456789abcdef")) : Optional.empty();
        }

        @Override
        public Path localFile(CatalogueModel model, ModelFile modelFile) {
            return directory.resolve("not-on-this-host").resolve(modelFile.path());
        }

        @Override
        public Optional<String> heldOn(String name) {
            return Optional.of(HOLDER);
        }

        @Override
        public io.macfleet.models.ModelShape shape(String name) {
            return io.macfleet.models.ModelShape.UNKNOWN;
        }
    }

    /** The model's file where {@code MacHubDownload} installs it on the Mac (root:wheel 644), and nowhere else. */
    private static PlacedFile heldBy(String name, long size, long seed) throws Exception {
        PlacedFile random = SimulatedPlacement.randomFile(directory, "random-" + seed, size, seed);
        String path = ModelLayout.singleFile(random.sha256(), name);
        PlacedFile file = new PlacedFile(directory.resolve("not-on-this-host").resolve(name), path.substring(ModelLayout.DIRECTORY.length() + 1),
                size, random.sha256());
        SimulatedMac holder = placement.simulation.fleet.machine(HOLDER);
        String staged = ModelLayout.STAGING_DIRECTORY + "/downloads/held/" + name;
        Files.createDirectories(holder.resolve(staged).getParent());
        Files.move(random.localFile(), holder.resolve(staged));
        try (SshRun run = placement.openRun()) {
            var target = placement.machines.getFirst().ssh();
            assertThat(run.execute(target, Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", "root", "-g", "wheel", "-m", "755",
                    ModelLayout.DIRECTORY)).succeeded()).isTrue();
            assertThat(run.execute(target, Command.sudo(PrivilegedProgram.INSTALL, "-o", "root", "-g", "wheel", "-m", "644", staged, path))
                    .succeeded()).isTrue();
        }
        assertThat(holder.ownerOf(path)).isEqualTo("root:wheel 644");
        return file;
    }

    private record Ran(int exitCode, String out, String err) {
    }

    private static Ran place(ModelCatalogue catalogue, String... arguments) {
        ModelPlaceCommand command = new ModelPlaceCommand();
        command.placement = new ModelPlacement(placement.runtimes, catalogue, new InMemoryHostKeyStore(), audit::add, Clock.systemUTC());
        CommandLine line = PlainCommandLine.configure(new CommandLine(command));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        line.setOut(new PrintWriter(out));
        line.setErr(new PrintWriter(err));
        int exit = line.execute(arguments);
        return new Ran(exit, out.toString(), err.toString());
    }

    private static void assertRelaysGone() {
        for (String name : MACS) {
            SimulatedMac mac = placement.simulation.fleet.machine(name);
            assertThat(mac.launchd().labels()).as(name).doesNotContain(PlacementEngine.LABEL);
            assertThat(mac.resolve(PlacementEngine.KEY)).as(name).doesNotExist();
            assertThat(mac.resolve(PlacementEngine.PLIST)).as(name).doesNotExist();
        }
    }

    private static void assertNothingStarted(PlacedFile file) {
        assertRelaysGone();
        for (String name : MACS) {
            if (!name.equals(HOLDER)) {
                Path onMac = placement.onMac(name, file);
                assertThat(onMac).as(name).doesNotExist();
                assertThat(onMac.resolveSibling(onMac.getFileName() + ".partial")).as(name).doesNotExist();
            }
        }
    }

    @Test
    void theMacThatHoldsTheModelFeedsTheChainAndTheControlHostSendsNothing() throws Exception {
        PlacedFile file = heldBy("Tiny-Q4_K_M.gguf", 24L * CHUNK + 4321, 31);
        Path onHolder = placement.onMac(HOLDER, file);
        FileTime before = Files.getLastModifiedTime(onHolder);

        Ran ran = place(new HeldOnAMac(file), "llm-a", "held", "--json", "--port", Integer.toString(placement.port));

        assertThat(ran.exitCode()).as(ran.err() + ran.out()).isZero();
        JsonNode json = new ObjectMapper().readTree(ran.out());
        assertThat(json.get("bytesFromControlHost").asLong()).isZero();
        assertThat(json.get("totalBytes").asLong()).isEqualTo(file.size());
        assertThat(json.get("succeeded").asBoolean()).isTrue();
        // The chain starts at the Mac that holds it, along the cables.
        assertThat(json.get("chains").get(0)).extracting(JsonNode::asText).containsExactlyElementsOf(MACS);
        Map<String, JsonNode> byMachine = new ConcurrentHashMap<>();
        json.get("machines").forEach(machine -> byMachine.put(machine.get("machine").asText(), machine));
        assertThat(byMachine.get(HOLDER).get("outcome").asText()).isEqualTo("already-present");
        assertThat(byMachine.get(HOLDER).get("message").asText()).contains("fed the chain from its own disk");
        for (String name : MACS.subList(1, 4)) {
            assertThat(byMachine.get(name).get("outcome").asText()).as(name).isEqualTo("placed");
            assertThat(byMachine.get(name).get("bytesWritten").asLong()).as(name).isEqualTo(file.size());
            assertThat(SimulatedPlacement.sha256(placement.onMac(name, file))).as(name).isEqualTo(file.sha256());
            assertThat(placement.simulation.fleet.machine(name).ownerOf(file.remotePath())).as(name).isEqualTo("root:wheel 644");
        }
        // The holder's file is read, never written: same bytes, same time, still root's.
        assertThat(SimulatedPlacement.sha256(onHolder)).isEqualTo(file.sha256());
        assertThat(Files.getLastModifiedTime(onHolder)).isEqualTo(before);
        assertThat(placement.simulation.fleet.machine(HOLDER).ownerOf(file.remotePath())).isEqualTo("root:wheel 644");
        assertThat(onHolder.resolveSibling(onHolder.getFileName() + ".partial")).doesNotExist();
        assertThat(Files.exists(file.localFile())).isFalse();
        assertThat(audit).anySatisfy(event -> assertThat(event.detail()).contains("held on llm-a: placed on 3, already on 1, failed on 0; 0 bytes from the control host"));
        System.out.printf("placement fed from %s: %d bytes from the control host for a model of %d bytes on 4 Macs, %.2f s%n",
                HOLDER, json.get("bytesFromControlHost").asLong(), file.size(), json.get("wallSeconds").asDouble());
        assertRelaysGone();
    }

    @Test
    void afterADownstreamRelayIsKilledTheNextRoundResendsAtMostOneChunkPerMacAndStillNothingFromTheControlHost() throws Exception {
        int chunk = 4 * CHUNK;
        PlacedFile file = heldBy("Big-Q4_K_M.gguf", 64L * CHUNK + 777, 32);
        AtomicBoolean killed = new AtomicBoolean();
        SimulatedMac victim = placement.simulation.fleet.machine("studio-03");
        PlacementReport report;
        try (SshRun run = placement.openRun()) {
            report = new PlacementEngine(placement.engineSettings(chunk)).place(run, "llm-a", placement.machines, List.of(file), Optional.of(HOLDER),
                    new NodeDeployer.Listener() {
                        @Override
                        public void copying(String machine, String name, long done, long total) {
                            if (machine.equals("studio-03") && done >= 6L * chunk && !killed.getAndSet(true)) {
                                assertThat(victim.launchd().crash(PlacementEngine.LABEL)).isTrue();
                            }
                        }
                    });
        }

        assertThat(killed).isTrue();
        assertThat(report.succeeded()).as(report.toString()).isTrue();
        assertThat(report.rounds()).isEqualTo(2);
        assertThat(report.bytesFromControlHost()).isZero();
        assertThat(report.machine(HOLDER).kind()).isEqualTo(PlacementReport.Kind.ALREADY_PRESENT);
        for (String name : MACS.subList(1, 4)) {
            PlacementReport.MacOutcome outcome = report.machine(name);
            assertThat(outcome.kind()).as(name).isEqualTo(PlacementReport.Kind.PLACED);
            assertThat(outcome.bytesResent()).as(name + " received again").isLessThanOrEqualTo(chunk);
            assertThat(SimulatedPlacement.sha256(placement.onMac(name, file))).as(name).isEqualTo(file.sha256());
        }
        System.out.printf("resume after kill -9 (fed from %s): %d bytes from the control host, %d rounds, %.2f s; received again per Mac: %s%n",
                HOLDER, report.bytesFromControlHost(), report.rounds(), report.wallMillis() / 1000.0,
                report.machines().stream().map(outcome -> outcome.machine() + " " + outcome.bytesResent()).toList());
    }

    /**
     * node deploy by name of a Mac-held model: the release carries no copy from this host; the fan-out places it from
     * studio-01 (every Mac then holds it root:wheel 644 where staging looks, so staging copies nothing); without a
     * fan-out, or when it fails, the deploy is refused naming the Mac that holds it, before anything is staged.
     */
    @Test
    void nodeDeployOfAMacHeldModelPlacesItFromThatMacOrIsRefusedNamingIt() throws Exception {
        PlacedFile file = heldBy("Deploy-Q4_K_M.gguf", 2L * CHUNK + 99, 35);
        HeldOnAMac catalogue = new HeldOnAMac(file);
        io.macfleet.models.ModelFits fits = new io.macfleet.models.ModelFits(placement.simulation.desiredState, placement.simulation.facts, catalogue);
        ModelPlacement fanOut = new ModelPlacement(placement.runtimes, catalogue, new InMemoryHostKeyStore(), audit::add, Clock.systemUTC());
        fanOut.settings(PlacementEngine.Settings.defaults().withPort(placement.port));
        io.macfleet.deployment.NodeService nodes = placement.nodes;
        // Nothing reaches staging here: a jar of the node's name stands in for the built node.
        Path nodeJar = directory.resolve("inference-node-0.1.0.jar");
        try (var out = new java.util.jar.JarOutputStream(Files.newOutputStream(nodeJar), new java.util.jar.Manifest())) {
            out.putNextEntry(new java.util.zip.ZipEntry("placeholder.txt"));
            out.write("a stand-in for the node jar".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        Optional<Path> jar = Optional.of(nodeJar);
        try {
            nodes.useModels(catalogue, fits, null);
            io.macfleet.deployment.NodeRelease release = nodes.release("llm-a", new io.macfleet.deployment.NodeService.Request(Optional.of("held"),
                    Optional.empty(), Optional.empty(), jar));
            assertThat(release.modelOnlyOnMacs()).isTrue();
            assertThat(release.catalogueName()).contains("held");
            assertThat(release.modelSha256()).isEqualTo(file.sha256());
            assertThat(release.modelPath()).isEqualTo(file.remotePath());

            // No fan-out (a service without the placement): refused, naming the holder and the Macs without it.
            assertThatThrownBy(() -> nodes.deploy("llm-a", release, placement.settings, NodeDeployer.Listener.NONE))
                    .isInstanceOf(io.macfleet.deployment.NodeService.RefusedException.class)
                    .hasMessageContaining("model held is held on studio-01 (model add --via), not on this host, and studio-02, studio-03, studio-04 do not"
                            + " hold it: this host cannot copy it to them")
                    .hasMessageContaining("macfleet model place llm-a held");
            for (String name : MACS) {
                assertThat(placement.simulation.fleet.machine(name).resolve(release.jarPath())).as(name).doesNotExist();
            }

            // The fan-out node deploy calls: placed from studio-01, nothing from this host, every Mac verified.
            Optional<io.macfleet.deployment.ModelFanOut.Placed> placed = fanOut.fanOut("llm-a", "held", placement.settings, NodeDeployer.Listener.NONE);
            assertThat(placed).hasValueSatisfying(done -> {
                assertThat(done.verifiedOn()).containsExactlyInAnyOrderElementsOf(MACS);
                assertThat(done.summary()).contains("placed on 3, already on 1, failed on 0; 0 bytes from the control host");
            });
            for (String name : MACS) {
                assertThat(placement.simulation.fleet.machine(name).ownerOf(release.modelPath())).as(name).isEqualTo("root:wheel 644");
                assertThat(SimulatedPlacement.sha256(placement.simulation.fleet.machine(name).resolve(release.modelPath()))).as(name)
                        .isEqualTo(file.sha256());
            }

            // A fan-out that fails (studio-01 lost its copy, the others never had it): refused with the placement's reason.
            PlacedFile lost = heldBy("Lost-Q4_K_M.gguf", CHUNK, 36);
            Files.delete(placement.onMac(HOLDER, lost));
            HeldOnAMac lostCatalogue = new HeldOnAMac(lost);
            ModelPlacement lostFanOut = new ModelPlacement(placement.runtimes, lostCatalogue, new InMemoryHostKeyStore(), audit::add, Clock.systemUTC());
            lostFanOut.settings(PlacementEngine.Settings.defaults().withPort(placement.port));
            nodes.useModels(lostCatalogue, new io.macfleet.models.ModelFits(placement.simulation.desiredState, placement.simulation.facts, lostCatalogue),
                    lostFanOut);
            io.macfleet.deployment.NodeRelease lostRelease = nodes.release("llm-a", new io.macfleet.deployment.NodeService.Request(Optional.of("held"),
                    Optional.empty(), Optional.empty(), jar));
            assertThatThrownBy(() -> nodes.deploy("llm-a", lostRelease, placement.settings, NodeDeployer.Listener.NONE))
                    .isInstanceOf(io.macfleet.deployment.NodeService.RefusedException.class)
                    .hasMessageContaining("studio-02, studio-03, studio-04 do not hold it")
                    .hasMessageContaining("the placement from studio-01 failed: the catalogue says studio-01 holds the model, but studio-01 does not hold "
                            + lost.remotePath() + " (missing)");
            assertNothingStarted(lost);
        } finally {
            nodes.useModels(null, null, null);
        }
    }

    @Test
    void aHolderThatNoLongerHoldsTheFileVerifiedIsRefusedAndNothingIsSent() throws Exception {
        PlacedFile gone = heldBy("Gone-Q4_K_M.gguf", 3L * CHUNK, 33);
        Files.delete(placement.onMac(HOLDER, gone));
        Ran missing = place(new HeldOnAMac(gone), "llm-a", "held", "--port", Integer.toString(placement.port));
        assertThat(missing.exitCode()).isEqualTo(1);
        assertThat(missing.err()).contains("the catalogue says studio-01 holds the model, but studio-01 does not hold " + gone.remotePath()
                + " (missing) with the catalogue's size and SHA-256: nothing was sent to llm-a");
        assertNothingStarted(gone);

        PlacedFile changed = heldBy("Changed-Q4_K_M.gguf", 3L * CHUNK, 34);
        byte[] bytes = Files.readAllBytes(placement.onMac(HOLDER, changed));
        bytes[12345] ^= 1;
        Files.write(placement.onMac(HOLDER, changed), bytes);
        try (SshRun run = placement.openRun()) {
            assertThatThrownBy(() -> new PlacementEngine(placement.engineSettings(CHUNK)).place(run, "llm-a", placement.machines, List.of(changed),
                    Optional.of(HOLDER), NodeDeployer.Listener.NONE))
                    .isInstanceOf(PlacementRefused.class)
                    .hasMessageContaining("studio-01 does not hold " + changed.remotePath() + " (its SHA-256 is ")
                    .hasMessageContaining("the catalogue's " + changed.sha256())
                    .hasMessageContaining("nothing was sent");
        }
        assertNothingStarted(changed);
    }
}
