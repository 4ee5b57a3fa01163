package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agroal.api.AgroalDataSource;
import io.macfleet.audit.AuditEvent;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.secrets.SecretReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * hf: sources against {@link HubStandIn}, a local server that answers like the hub: the revision API, the resolve
 * redirect with X-Linked-Etag/X-Linked-Size, Range on the CDN path. Never the internet.
 */
class HuggingFaceDownloadTest {

    @TempDir
    Path temporary;

    private AgroalDataSource dataSource;
    private HubStandIn hub;
    private Path store;
    private final List<AuditEvent> audit = new ArrayList<>();
    private byte[] gguf;

    @BeforeEach
    void start() throws Exception {
        dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:hub-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null));
        hub = new HubStandIn("unsloth/Tiny-GGUF");
        gguf = Files.readAllBytes(TestModels.gguf(temporary.resolve("fixture.gguf"), 15, 300_000, 7));
        hub.files.put("Tiny-Q4_K_M.gguf", gguf);
        hub.files.put("config.json", "{\"note\": \"a small non-LFS file\"}".getBytes());
        store = temporary.resolve("home/models");
    }

    @AfterEach
    void stop() {
        hub.close();
        dataSource.close();
    }

    private ModelCatalogue catalogue(Optional<SecretReference> token) {
        return new ModelCatalogue(dataSource, audit::add, store, hub.uri(), token, Optional.empty(), Clock.systemUTC());
    }

    private CatalogueModel add(ModelCatalogue catalogue, String name, Optional<String> include) {
        return catalogue.add(name, "hf:unsloth/Tiny-GGUF@main", include, Optional.empty(), "cli:test", HuggingFaceHub.Progress.NONE);
    }

    @Test
    void downloadsOnceFollowingTheRedirectVerifiedAgainstTheLinkedEtag() throws Exception {
        List<String> progress = new ArrayList<>();
        CatalogueModel model = catalogue(Optional.empty()).add("tiny", "hf:unsloth/Tiny-GGUF@main", Optional.of("*.gguf"), Optional.empty(),
                "cli:test", (file, done, total) -> progress.add(file + " " + done + "/" + total));

        assertThat(model.source()).isEqualTo("hf:unsloth/Tiny-GGUF@" + HubStandIn.COMMIT);
        assertThat(model.files()).containsExactly(new ModelFile("Tiny-Q4_K_M.gguf", gguf.length, HubStandIn.sha256(gguf)));
        assertThat(model.quantization()).isEqualTo("Q4_K_M");
        assertThat(Files.readAllBytes(store.resolve("tiny/Tiny-Q4_K_M.gguf"))).isEqualTo(gguf);
        assertThat(hub.requests).containsExactly(
                "GET /api/models/unsloth/Tiny-GGUF/revision/main",
                "HEAD /unsloth/Tiny-GGUF/resolve/" + HubStandIn.COMMIT + "/Tiny-Q4_K_M.gguf",
                "GET /cdn/" + HubStandIn.sha256(gguf));
        assertThat(progress.getFirst()).isEqualTo("Tiny-Q4_K_M.gguf 0/" + gguf.length);
        assertThat(progress.getLast()).isEqualTo("Tiny-Q4_K_M.gguf " + gguf.length + "/" + gguf.length);
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void aBrokenBodyIsKeptAsPartialAndTheNextAddResumesWithRange() throws Exception {
        hub.cutAfter = 100_000;
        ModelCatalogue catalogue = catalogue(Optional.empty());
        assertThatThrownBy(() -> add(catalogue, "tiny", Optional.of("*.gguf")))
                .isInstanceOf(ModelRefused.class)
                .hasMessageContaining("hf:unsloth/Tiny-GGUF@main Tiny-Q4_K_M.gguf: the download ended after 100000 of " + gguf.length + " bytes")
                .hasMessageContaining("Tiny-Q4_K_M.gguf.partial");
        assertThat(catalogue.find("tiny")).isEmpty();
        assertThat(Files.exists(store.resolve("tiny"))).isFalse();
        assertThat(leftovers()).containsExactly("Tiny-Q4_K_M.gguf.partial");

        hub.requests.clear();
        CatalogueModel model = add(catalogue, "tiny", Optional.of("*.gguf"));
        assertThat(hub.requests).contains("GET /cdn/" + HubStandIn.sha256(gguf) + " bytes=100000-");
        assertThat(model.files().getFirst().sha256()).isEqualTo(HubStandIn.sha256(gguf));
        assertThat(Files.readAllBytes(store.resolve("tiny/Tiny-Q4_K_M.gguf"))).isEqualTo(gguf);
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void aWrongHashRemovesTheBytesAndNamesBothHashes() throws Exception {
        hub.wrongHash = true;
        ModelCatalogue catalogue = catalogue(Optional.empty());
        assertThatThrownBy(() -> add(catalogue, "tiny", Optional.of("*.gguf")))
                .isInstanceOf(ModelRefused.class)
                .hasMessageContaining("Tiny-Q4_K_M.gguf: SHA-256 mismatch: the hub publishes " + HubStandIn.sha256(new byte[] {1}))
                .hasMessageContaining("hash to " + HubStandIn.sha256(gguf));
        assertThat(catalogue.find("tiny")).isEmpty();
        assertThat(Files.exists(store.resolve("tiny"))).isFalse();
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void notFoundAndRefusedAccessAreNamedAndATokenReachesTheHubButNotTheCdn() throws Exception {
        ModelCatalogue catalogue = catalogue(Optional.empty());
        assertThatThrownBy(() -> catalogue.add("x", "hf:unsloth/Missing@main", Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class)
                .hasMessage("hf:unsloth/Missing@main: not found on the hub (404 at /api/models/unsloth/Missing/revision/main)");

        hub.requiredToken = "hf_secret_value";
        assertThatThrownBy(() -> add(catalogue, "tiny", Optional.of("*.gguf"))).isInstanceOf(ModelRefused.class)
                .hasMessageStartingWith("hf:unsloth/Tiny-GGUF@main: the hub refused access (401 at /api/models/unsloth/Tiny-GGUF/revision/main)")
                .hasMessageNotContaining("hf_secret_value");

        assertThatThrownBy(() -> catalogue.add("tiny", "hf:unsloth/Tiny-GGUF@main", Optional.empty(),
                Optional.of(SecretReference.of("env:MACFLEET_MODELS_TEST_UNSET_TOKEN")), "cli:test", HuggingFaceHub.Progress.NONE))
                .isInstanceOf(ModelRefused.class).hasMessageStartingWith("the hub token is not available: ");

        Path tokenFile = Files.writeString(temporary.resolve("hub-token"), "hf_secret_value");
        CatalogueModel model = catalogue(Optional.of(SecretReference.of("file:" + tokenFile))).add("tiny", "hf:unsloth/Tiny-GGUF@main",
                Optional.empty(), Optional.empty(), "cli:test", HuggingFaceHub.Progress.NONE);
        assertThat(model.files()).extracting(ModelFile::path).containsExactly("Tiny-Q4_K_M.gguf");
        assertThat(hub.authorizations).filteredOn(line -> line.startsWith("/cdn/")).allMatch(line -> line.endsWith(" -"));
        assertThat(hub.authorizations).filteredOn(line -> line.startsWith("/api/")).last().asString().endsWith("Bearer hf_secret_value");
        assertThat(audit).allSatisfy(event -> assertThat(event.detail()).doesNotContain("hf_secret_value"));
    }

    @Test
    void aSmallFileIsVerifiedAgainstItsGitBlobEtagAndAFileNotAModelIsRefused() throws Exception {
        ModelCatalogue catalogue = catalogue(Optional.empty());
        assertThatThrownBy(() -> add(catalogue, "config-only", Optional.of("config.json"))).isInstanceOf(ModelRefused.class)
                .hasMessageContaining("not an MLX model").hasMessageContaining("config.json");
        assertThat(hub.requests).contains("HEAD /unsloth/Tiny-GGUF/resolve/" + HubStandIn.COMMIT + "/config.json",
                "GET /unsloth/Tiny-GGUF/resolve/" + HubStandIn.COMMIT + "/config.json");
        assertThat(catalogue.find("config-only")).isEmpty();
        assertThat(Files.exists(store.resolve("config-only"))).isFalse();
        assertThatThrownBy(() -> add(catalogue, "none", Optional.of("*.bin"))).isInstanceOf(ModelRefused.class)
                .hasMessageContaining("no file matches --include *.bin");
        assertThat(leftovers()).isEmpty();
        // A later add of the same name with another selection holds only the files it selected.
        CatalogueModel model = add(catalogue, "config-only", Optional.of("*.gguf"));
        assertThat(model.files()).extracting(ModelFile::path).containsExactly("Tiny-Q4_K_M.gguf");
        try (Stream<Path> stored = Files.list(store.resolve("config-only"))) {
            assertThat(stored.map(path -> path.getFileName().toString())).containsExactly("Tiny-Q4_K_M.gguf");
        }
    }

    private List<String> leftovers() throws Exception {
        Path downloads = store.resolve(".downloads");
        if (!Files.exists(downloads)) {
            return List.of();
        }
        try (Stream<Path> walk = Files.walk(downloads)) {
            return walk.filter(Files::isRegularFile).map(path -> path.getFileName().toString()).toList();
        }
    }
}
