package io.macfleet.models.placement;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.audit.AuditEvent;
import io.macfleet.cli.PlainCommandLine;
import io.macfleet.models.CatalogueModel;
import io.macfleet.models.ModelCatalogue;
import io.macfleet.models.ModelFile;
import io.macfleet.ssh.InMemoryHostKeyStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code model place CLUSTER NAME [--json]} against four simulated Macs (base address 127.0.145.11), with a small
 * catalogue of one model standing in for the catalogue's store: exit codes, the JSON's bytesFromControlHost, the audit
 * entry, an unknown model and an unknown cluster.
 */
class ModelPlaceCommandTest {

    @TempDir
    static Path directory;
    static SimulatedPlacement placement;
    static PlacedFile file;
    static final List<AuditEvent> audit = new CopyOnWriteArrayList<>();

    /** The catalogue holding one model whose file lies in the test's directory. */
    static final class OneModelCatalogue extends ModelCatalogue {
        @Override
        public Optional<CatalogueModel> find(String name) {
            return name.equals("tiny") ? Optional.of(new CatalogueModel("tiny", "gguf", "llama", "F32",
                    List.of(new ModelFile("tiny.gguf", file.size(), file.sha256())), file.size(), List.of("bundled"), "test")) : Optional.empty();
        }

        @Override
        public Path localFile(CatalogueModel model, ModelFile modelFile) {
            return file.localFile();
        }

        @Override
        public List<CatalogueModel> list() {
            return List.of(find("tiny").orElseThrow());
        }

        @Override
        public Optional<String> heldOn(String name) {
            return Optional.empty();
        }
    }

    @BeforeAll
    static void start() throws Exception {
        placement = SimulatedPlacement.start(directory, 4, "127.0.145.11");
        file = SimulatedPlacement.randomFile(directory, "tiny.gguf", 3L << 20, 9);
    }

    @AfterAll
    static void stop() {
        if (placement != null) {
            placement.close();
        }
    }

    private record Ran(int exitCode, String out, String err) {
    }

    private static Ran run(String... arguments) {
        ModelPlaceCommand command = new ModelPlaceCommand();
        command.placement = new ModelPlacement(placement.runtimes, new OneModelCatalogue(), new InMemoryHostKeyStore(), audit::add, Clock.systemUTC());
        CommandLine line = PlainCommandLine.configure(new CommandLine(command));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        line.setOut(new PrintWriter(out));
        line.setErr(new PrintWriter(err));
        int exit = line.execute(arguments);
        return new Ran(exit, out.toString(), err.toString());
    }

    @Test
    void placesTheCatalogueModelAndReportsTheBytesFromTheControlHostAsJson() throws Exception {
        Ran ran = run("llm-a", "tiny", "--json", "--port", Integer.toString(placement.port), "--limit-rate", "64");
        assertThat(ran.exitCode()).as(ran.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(ran.out());
        assertThat(json.get("bytesFromControlHost").asLong()).isEqualTo(file.size());
        assertThat(json.get("totalBytes").asLong()).isEqualTo(file.size());
        assertThat(json.get("succeeded").asBoolean()).isTrue();
        assertThat(json.get("machines")).hasSize(4).allSatisfy(machine -> assertThat(machine.get("outcome").asText()).isEqualTo("placed"));
        // One file: where node deploy looks for it.
        String expected = io.macfleet.deployment.NodeLayout.model(file.sha256(), "tiny.gguf");
        assertThat(SimulatedPlacement.sha256(placement.simulation.fleet.machine("studio-04").resolve(expected))).isEqualTo(file.sha256());
        assertThat(audit).anySatisfy(event -> {
            assertThat(event.action()).isEqualTo("model.place");
            assertThat(event.machine()).isEqualTo("llm-a");
            assertThat(event.outcome()).isEqualTo(AuditEvent.Outcome.SUCCESS);
            assertThat(event.detail()).contains("tiny on llm-a: placed on 4");
        });

        Ran again = run("llm-a", "tiny", "--port", Integer.toString(placement.port));
        assertThat(again.exitCode()).isZero();
        assertThat(again.out()).contains("placed on 0, already on 4, failed on 0; 0 bytes from the control host");
    }

    /**
     * node deploy's fan-out (deployment.ModelFanOut): a one-file catalogue model is placed Mac to Mac and left root's
     * (node deploy takes a file as in place only when it is root:wheel 644), a name the catalogue does not hold is left
     * to staging's own copy (the release carries the catalogue's name; nothing is looked up by path).
     */
    @Test
    void nodeDeploysFanOutPlacesACatalogueFileAsRootsAndLeavesOtherFilesToStaging() throws Exception {
        ModelPlacement fanOut = new ModelPlacement(placement.runtimes, new OneModelCatalogue(), new InMemoryHostKeyStore(), audit::add, Clock.systemUTC());
        fanOut.settings(PlacementEngine.Settings.defaults().withPort(placement.port));
        io.macfleet.ssh.SshSettings ssh = placement.settings;

        assertThat(fanOut.fanOut("llm-a", "not-catalogued", ssh, io.macfleet.deployment.NodeDeployer.Listener.NONE)).isEmpty();
        Optional<io.macfleet.deployment.ModelFanOut.Placed> placed = fanOut.fanOut("llm-a", "tiny", ssh, io.macfleet.deployment.NodeDeployer.Listener.NONE);
        assertThat(placed).hasValueSatisfying(done -> assertThat(done.summary()).startsWith("placed over Thunderbolt: tiny on llm-a"));
        // node deploy's staging takes these Macs' copies as verified (no second shasum, no second df).
        assertThat(placed.orElseThrow().verifiedOn()).containsExactlyInAnyOrder("studio-01", "studio-02", "studio-03", "studio-04");
        String onMac = io.macfleet.deployment.NodeLayout.model(file.sha256(), "tiny.gguf");
        for (String mac : List.of("studio-01", "studio-02", "studio-03", "studio-04")) {
            assertThat(placement.simulation.fleet.machine(mac).ownerOf(onMac)).as(mac).isEqualTo("root:wheel 644");
            // The survey makes the models directory root's, as staging does: its owner is not changed back and forth.
            assertThat(placement.simulation.fleet.machine(mac).ownerOf(io.macfleet.deployment.NodeLayout.MODEL_DIRECTORY)).as(mac)
                    .isEqualTo("root:wheel 755");
        }
    }

    @Test
    void anUnknownModelOrClusterIsBadInput() {
        Ran model = run("llm-a", "nope");
        assertThat(model.exitCode()).isEqualTo(2);
        assertThat(model.err()).contains("no model named 'nope' in the catalogue");
        Ran rate = run("llm-a", "tiny", "--limit-rate", "-1");
        assertThat(rate.exitCode()).isEqualTo(2);
        assertThat(rate.err()).contains("--limit-rate must not be negative, got -1");
        Ran cluster = run("llm-zz", "tiny");
        assertThat(cluster.exitCode()).isEqualTo(2);
        assertThat(cluster.err()).contains("llm-zz");
    }
}
