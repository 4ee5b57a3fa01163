package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SshKeys;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code model add --via}: a simulated Mac fetches the files itself from {@link HubStandIn} with the simulated curl
 * (real HTTP, {@code --continue-at -}, {@code --config -} on standard input), checks them with its own shasum and
 * renames them only when equal; the control host only asks the hub what to fetch.
 */
class MacHubDownloadTest {

    private static final String TOKEN = "hf_via_secret_token";

    @TempDir
    Path directory;
    private SimulatedFleet fleet;
    private SshTransport transport;
    private SshTarget target;
    private HubStandIn hub;
    private byte[] gguf;

    @BeforeEach
    void start() throws Exception {
        KeyPair key = SshKeys.generate();
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "test");
        fleet = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic()).baseAddress("127.0.189.11").basePort(0)
                .macStudio("studio-01", 512, "26.2").build().start();
        transport = new SshTransport(SshSettings.defaults("test").withAcceptNewHostKeys(true), new InMemoryHostKeyStore(), event -> {
        });
        SimulatedFleet.Endpoint endpoint = fleet.endpoint("studio-01");
        target = SshTarget.of("studio-01", endpoint.host(), fleet.sshUser(), SecretReference.of("file:" + keyFile)).withPort(endpoint.port());
        hub = new HubStandIn("unsloth/Tiny-GGUF");
        gguf = Files.readAllBytes(TestModels.gguf(directory.resolve("fixture.gguf"), 15, 600_000, 11));
        hub.files.put("Tiny-Q4_K_M.gguf", gguf);
        hub.files.put("config.json", "{\"note\": \"a small non-LFS file\"}".getBytes());
    }

    @AfterEach
    void stop() {
        try {
            hub.close();
        } catch (RuntimeException alreadyStopped) {
            // the unreachable-hub case stopped it
        }
        fleet.close();
    }

    private HuggingFaceHub.Plan plan(Optional<String> token) {
        return new HuggingFaceHub(hub.uri(), token).plan(HuggingFaceHub.Reference.parse("hf:unsloth/Tiny-GGUF@main"), Optional.of("*"));
    }

    private MacHubDownload.Result download(HuggingFaceHub.Plan plan, Optional<String> token) {
        try (SshRun run = transport.openRun()) {
            MachineResult<MacHubDownload.Result> result = run.onFleet(List.of(target),
                    mac -> MacHubDownload.download(mac, "tiny", plan, token, directory.resolve("sketch-" + System.nanoTime()), HuggingFaceHub.Progress.NONE))
                    .getFirst();
            if (result.error() instanceof RuntimeException failure) {
                throw failure;
            }
            return result.value();
        }
    }

    private Path onMac(String file) {
        return fleet.machine("studio-01").resolve(MacHubDownload.DOWNLOADS + "/tiny/" + file);
    }

    @Test
    void theMacFetchesVerifiesAndReadsTheHeaderAndTheTokenNeverReachesTheCdn() throws Exception {
        hub.requiredToken = TOKEN;
        HuggingFaceHub.Plan plan = plan(Optional.of(TOKEN));
        MacHubDownload.Result result = download(plan, Optional.of(TOKEN));

        assertThat(result.commit()).isEqualTo(HubStandIn.COMMIT);
        // Installed root:wheel 644 where a placement puts the files of a model of several; the staging copy is gone.
        String installed = io.macfleet.deployment.NodeLayout.MODEL_DIRECTORY + "/tiny/Tiny-Q4_K_M.gguf";
        assertThat(result.installed()).contains(installed);
        assertThat(fleet.machine("studio-01").resolve(installed)).hasBinaryContent(gguf);
        assertThat(fleet.machine("studio-01").ownerOf(installed)).isEqualTo("root:wheel 644");
        assertThat(onMac("Tiny-Q4_K_M.gguf")).doesNotExist();
        assertThat(result.files()).extracting(ModelFile::sha256).contains(HubStandIn.sha256(gguf));
        assertThat(result.inspection().format()).isEqualTo(ModelInspection.GGUF);
        assertThat(result.inspection().architecture()).isEqualTo("llama");
        assertThat(result.inspection().quantization()).isEqualTo("Q4_K_M");
        // The CDN (another origin) saw no token; the hub's own resolve URL of the small file got it from curl's config.
        assertThat(hub.authorizations).filteredOn(line -> line.startsWith("/cdn/")).isNotEmpty().allSatisfy(line -> assertThat(line).endsWith(" -"));
        assertThat(hub.authorizations).contains("/unsloth/Tiny-GGUF/resolve/" + HubStandIn.COMMIT + "/config.json Bearer " + TOKEN);
        // The control host fetched no byte of the GGUF: the only CDN GETs are the Mac's.
        assertThat(hub.requests).filteredOn(line -> line.startsWith("GET /cdn/")).hasSize(1);

    }

    @Test
    void aCutBodyIsResumedWithARangeAndAWrongHashRemovesThePartialFile() {
        HuggingFaceHub.Plan plan = plan(Optional.empty());
        hub.cutAfter = 200_000;
        assertThatThrownBy(() -> download(plan, Optional.empty())).isInstanceOf(ModelRefused.class)
                .hasMessageContaining("Tiny-Q4_K_M.gguf on studio-01").hasMessageContaining("exit 18")
                .hasMessageContaining("the next add resumes it");
        assertThat(onMac("Tiny-Q4_K_M.gguf.partial")).exists();
        assertThat(onMac("Tiny-Q4_K_M.gguf")).doesNotExist();

        download(plan, Optional.empty());
        assertThat(hub.requests).anyMatch(line -> line.startsWith("GET /cdn/") && line.contains("bytes="));
        assertThat(fleet.machine("studio-01").resolve(io.macfleet.deployment.NodeLayout.MODEL_DIRECTORY + "/tiny/Tiny-Q4_K_M.gguf"))
                .hasBinaryContent(gguf);

    }

    @Test
    void aWrongHashRemovesThePartialFileAndA404OrAnUnreachableHubIsNamed() {
        hub.wrongHash = true;
        HuggingFaceHub.Plan wrong = plan(Optional.empty());
        assertThatThrownBy(() -> download(wrong, Optional.empty())).isInstanceOf(ModelRefused.class)
                .hasMessageContaining("Tiny-Q4_K_M.gguf on studio-01: SHA-256 mismatch: the hub publishes ")
                .hasMessageContaining("the bytes received hash to " + HubStandIn.sha256(gguf)).hasMessageContaining("the file was removed");
        assertThat(onMac("Tiny-Q4_K_M.gguf.partial")).doesNotExist();
        assertThat(onMac("Tiny-Q4_K_M.gguf")).doesNotExist();

        hub.wrongHash = false;
        HuggingFaceHub.Plan plan = plan(Optional.empty());
        hub.files.remove("config.json");
        assertThatThrownBy(() -> download(plan, Optional.empty())).isInstanceOf(ModelRefused.class)
                .satisfies(failure -> assertThat(((ModelRefused) failure).reason()).isEqualTo(ModelRefused.Reason.NOT_FOUND))
                .hasMessageContaining("config.json on studio-01: curl failed (exit 22)").hasMessageContaining("404");

        hub.close();
        assertThatThrownBy(() -> download(plan, Optional.empty())).isInstanceOf(ModelRefused.class)
                .hasMessageContaining("on studio-01: curl failed (exit 7)").hasMessageContaining("the Mac cannot reach the hub");
    }

    @Test
    void theCatalogueRecordsTheFilesTheirHashesAndTheMacThatHoldsThem() {
        try (var dataSource = io.macfleet.database.Database.open(new io.macfleet.database.DatabaseSettings("jdbc:h2:mem:via-"
                + java.util.UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null))) {
            List<io.macfleet.audit.AuditEvent> audit = new java.util.concurrent.CopyOnWriteArrayList<>();
            Path home = directory.resolve("home/models");
            ModelCatalogue catalogue = new ModelCatalogue(dataSource, audit::add, home, hub.uri(), Optional.empty(), Optional.empty(),
                    java.time.Clock.systemUTC());
            CatalogueModel model = catalogue.addVia("tiny", "hf:unsloth/Tiny-GGUF@main", Optional.of("*.gguf"), Optional.empty(), "cli:test",
                    "studio-01", (plan, token, sketch) -> download(plan, token));

            assertThat(model.source()).isEqualTo("hf:unsloth/Tiny-GGUF@" + HubStandIn.COMMIT);
            assertThat(model.files()).containsExactly(new ModelFile("Tiny-Q4_K_M.gguf", gguf.length, HubStandIn.sha256(gguf)));
            assertThat(model.quantization()).isEqualTo("Q4_K_M");
            assertThat(catalogue.heldOn("tiny")).hasValue("studio-01");
            // A model of one file lies where node deploy and a placement look for it on that Mac; nothing on this host.
            String installed = io.macfleet.deployment.NodeLayout.model(HubStandIn.sha256(gguf), "Tiny-Q4_K_M.gguf");
            assertThat(fleet.machine("studio-01").resolve(installed)).hasBinaryContent(gguf);
            assertThat(home.resolve("tiny")).doesNotExist();
            assertThat(audit).extracting(io.macfleet.audit.AuditEvent::detail).anyMatch(detail -> detail.contains("via studio-01"));
            assertThatThrownBy(() -> catalogue.resolve("tiny")).isInstanceOf(ModelRefused.class).hasMessageContaining("held on studio-01");
            assertThatThrownBy(() -> catalogue.addVia("tiny", "hf:unsloth/Tiny-GGUF@main", Optional.empty(), Optional.empty(), "cli:test",
                    "studio-01", (plan, token, sketch) -> download(plan, token))).isInstanceOf(ModelRefused.class).hasMessageContaining("already");
        }
    }
}
