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
        assertThat(onMac("Tiny-Q4_K_M.gguf")).hasBinaryContent(gguf);
        assertThat(onMac("Tiny-Q4_K_M.gguf.partial")).doesNotExist();
        assertThat(result.files()).extracting(ModelFile::sha256).contains(HubStandIn.sha256(gguf));
        assertThat(result.inspection().format()).isEqualTo(ModelInspection.GGUF);
        assertThat(result.inspection().architecture()).isEqualTo("llama");
        assertThat(result.inspection().quantization()).isEqualTo("Q4_K_M");
        // The CDN (another origin) saw no token; the hub's own resolve URL of the small file got it from curl's config.
        assertThat(hub.authorizations).filteredOn(line -> line.startsWith("/cdn/")).isNotEmpty().allSatisfy(line -> assertThat(line).endsWith(" -"));
        assertThat(hub.authorizations).contains("/unsloth/Tiny-GGUF/resolve/" + HubStandIn.COMMIT + "/config.json Bearer " + TOKEN);
        // The control host fetched no byte of the GGUF: the only CDN GETs are the Mac's.
        assertThat(hub.requests).filteredOn(line -> line.startsWith("GET /cdn/")).hasSize(1);

        // Again: what is there and verified is not fetched again.
        int before = hub.requests.size();
        download(plan, Optional.of(TOKEN));
        assertThat(hub.requests.subList(before, hub.requests.size())).noneMatch(line -> line.startsWith("GET "));
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
        assertThat(onMac("Tiny-Q4_K_M.gguf")).hasBinaryContent(gguf);

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
}
