package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.audit.AuditEvent;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The catalogue on H2: local GGUF, split GGUF and MLX sources; refusals that change nothing; remove. */
class ModelCatalogueTest {

    @TempDir
    Path temporary;

    private AgroalDataSource dataSource;
    private ModelCatalogue catalogue;
    private final List<AuditEvent> audit = new java.util.concurrent.CopyOnWriteArrayList<>();
    private Path store;

    @BeforeEach
    void open() {
        dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:models-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null));
        store = temporary.resolve("home/models");
        catalogue = new ModelCatalogue(dataSource, audit::add, store, URI.create("http://127.0.0.1:9"), Optional.empty(), Optional.empty(),
                Clock.systemUTC());
    }

    @AfterEach
    void close() {
        dataSource.close();
    }

    @Test
    void aGgufFileIsCopiedHashedAndDescribedFromItsHeader() throws Exception {
        Path source = TestModels.gguf(temporary.resolve("src/llama-8b-q4.gguf"), 15, 100_000, 1);

        CatalogueModel model = catalogue.add("llama-8b", source.toString(), Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE);

        assertThat(model.format()).isEqualTo("gguf");
        assertThat(model.architecture()).isEqualTo("llama");
        assertThat(model.quantization()).isEqualTo("Q4_K_M");
        assertThat(model.runtimes()).containsExactly("bundled", "llama.cpp");
        assertThat(model.files()).containsExactly(new ModelFile("llama-8b-q4.gguf", Files.size(source), HuggingFaceHub.sha256(source)));
        assertThat(model.totalBytes()).isEqualTo(Files.size(source));
        assertThat(model.source()).isEqualTo(source.toAbsolutePath().toString());
        Path stored = catalogue.localFile(model, model.files().getFirst());
        assertThat(stored).isEqualTo(store.resolve("llama-8b/llama-8b-q4.gguf"));
        assertThat(Files.mismatch(stored, source)).isEqualTo(-1);
        assertThat(catalogue.find("llama-8b")).contains(model);
        assertThat(catalogue.list()).containsExactly(model);
        assertThat(catalogue.resolve("llama-8b")).contains(stored);
        assertThat(catalogue.resolve("/models/llama-8b.gguf")).isEmpty();
        assertThat(catalogue.shape("llama-8b")).isEqualTo(new ModelShape(32, 8, 128, 8192));
        assertThat(audit).anySatisfy(event -> assertThat(event.action()).isEqualTo("model.add"));
        try (var left = Files.list(store)) {
            assertThat(left.map(path -> path.getFileName().toString())).containsExactly("llama-8b");
        }
    }

    @Test
    void splitPartsComeTogetherAndAMissingPartIsNamed() throws Exception {
        Path directory = temporary.resolve("split");
        for (int part = 1; part <= 3; part++) {
            TestModels.gguf(directory.resolve(String.format("big-%05d-of-00003.gguf", part)), 18, 5_000, part);
        }
        CatalogueModel model = catalogue.add("big", directory.resolve("big-00001-of-00003.gguf").toString(), Optional.empty(),
                Optional.empty(), "cli:test", HuggingFaceHub.Progress.NONE);
        assertThat(model.files()).extracting(ModelFile::path)
                .containsExactly("big-00001-of-00003.gguf", "big-00002-of-00003.gguf", "big-00003-of-00003.gguf");
        assertThat(model.quantization()).isEqualTo("Q6_K");
        assertThat(catalogue.weights(model)).isEqualTo(store.resolve("big/big-00001-of-00003.gguf"));

        Files.delete(directory.resolve("big-00002-of-00003.gguf"));
        assertThatThrownBy(() -> catalogue.add("big-2", directory.resolve("big-00001-of-00003.gguf").toString(), Optional.empty(),
                Optional.empty(), "cli:test", HuggingFaceHub.Progress.NONE))
                .isInstanceOf(ModelRefused.class).hasMessageContaining("missing parts [big-00002-of-00003.gguf]");
        assertThat(catalogue.find("big-2")).isEmpty();
    }

    @Test
    void anMlxDirectoryNeedsConfigAndEveryIndexedShard() throws Exception {
        Path directory = TestModels.mlx(temporary.resolve("qwen3-mlx"), 2, true);
        CatalogueModel model = catalogue.add("qwen3-4bit", directory.toString(), Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE);
        assertThat(model.format()).isEqualTo("mlx");
        assertThat(model.architecture()).isEqualTo("qwen3");
        assertThat(model.quantization()).isEqualTo("4-bit");
        assertThat(model.runtimes()).containsExactly("mlx");
        assertThat(model.files()).extracting(ModelFile::path).containsExactly("config.json", "model-00001-of-00002.safetensors",
                "model-00002-of-00002.safetensors", "model.safetensors.index.json", "tokenizer.json");
        assertThat(catalogue.weights(model)).isEqualTo(store.resolve("qwen3-4bit"));
        assertThat(catalogue.shape("qwen3-4bit")).isEqualTo(new ModelShape(28, 8, 128, 40960));

        Path broken = TestModels.mlx(temporary.resolve("broken-mlx"), 3, true);
        Files.delete(broken.resolve("model-00003-of-00003.safetensors"));
        assertThatThrownBy(() -> catalogue.add("broken", broken.toString(), Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class)
                .hasMessageContaining("missing 1 shard(s)").hasMessageContaining("model-00003-of-00003.safetensors");
        assertThat(Files.exists(store.resolve("broken"))).isFalse();
    }

    @Test
    void notAModelIsRefusedNamingTheFileAndNothingIsStored() throws Exception {
        Path text = Files.writeString(temporary.resolve("notes.gguf"), "these are not weights");
        assertThatThrownBy(() -> catalogue.add("notes", text.toString(), Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class)
                .hasMessage("not a model: " + text.toAbsolutePath() + " does not start with the GGUF magic");
        Path directory = Files.createDirectories(temporary.resolve("random"));
        Files.writeString(directory.resolve("README.md"), "hello");
        assertThatThrownBy(() -> catalogue.add("random", directory.toString(), Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class).hasMessageContaining("neither a GGUF file nor an MLX config.json");
        Path config = Files.createDirectories(temporary.resolve("configless"));
        Files.writeString(config.resolve("config.json"), "{\"model_type\": \"llama\"}");
        assertThatThrownBy(() -> catalogue.add("configless", config.toString(), Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class)
                .hasMessage("not an MLX model: " + config.toAbsolutePath() + " has config.json but no .safetensors file");
        assertThatThrownBy(() -> catalogue.add("missing", temporary.resolve("nowhere.gguf").toString(), Optional.empty(), Optional.empty(),
                "cli:test", HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class).hasMessageContaining("does not exist");
        assertThat(catalogue.list()).isEmpty();
        assertThat(audit).isEmpty();
        try (var left = Files.list(store)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void badNamesTakenNamesAndRemove() throws Exception {
        Path source = TestModels.gguf(temporary.resolve("m.gguf"), 7, 1000, 3);
        for (String bad : List.of("../escape", "a/b", ".hidden", "")) {
            assertThatThrownBy(() -> catalogue.add(bad, source.toString(), Optional.empty(), Optional.empty(), "cli:test",
                    HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class).hasMessageStartingWith("bad model name");
        }
        CatalogueModel model = catalogue.add("m", source.toString(), Optional.empty(), Optional.empty(), "cli:test", HuggingFaceHub.Progress.NONE);
        assertThat(model.quantization()).isEqualTo("Q8_0");
        assertThatThrownBy(() -> catalogue.add("m", source.toString(), Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class).hasMessage("model m is already in the catalogue (remove it first)");
        assertThat(catalogue.find("m")).contains(model);

        assertThat(catalogue.remove("m", "cli:test")).isTrue();
        assertThat(catalogue.find("m")).isEmpty();
        assertThat(Files.exists(store.resolve("m"))).isFalse();
        assertThat(catalogue.remove("m", "cli:test")).isFalse();
    }

    /**
     * A directory models/NAME without a row (an add that stopped between the rename and the insert) does not block the
     * name for ever: once it has been there a while it is removed with an audit entry and the add goes on; moments after
     * it appeared it may be another add's, so that is a conflict.
     */
    @Test
    void anOrphanDirectoryWithoutARowIsRemovedWithAnAuditEntryButNotOneThatJustAppeared() throws Exception {
        Path source = TestModels.gguf(temporary.resolve("src/orphan.gguf"), 15, 4096, 5);
        Path orphan = store.resolve("orphan");
        Files.createDirectories(orphan);
        Files.writeString(orphan.resolve("half.gguf"), "left by a crash");

        assertThatThrownBy(() -> catalogue.add("orphan", source.toString(), Optional.empty(), Optional.empty(), "cli:test",
                HuggingFaceHub.Progress.NONE))
                .isInstanceOf(ModelRefused.class).hasMessageContaining("was put in place moments ago without a catalogue row");
        assertThat(orphan.resolve("half.gguf")).exists();

        ModelCatalogue later = new ModelCatalogue(dataSource, audit::add, store, URI.create("http://127.0.0.1:9"), Optional.empty(), Optional.empty(),
                Clock.offset(Clock.systemUTC(), ModelCatalogue.ORPHAN_AFTER.plusSeconds(30)));
        CatalogueModel model = later.add("orphan", source.toString(), Optional.empty(), Optional.empty(), "cli:test", HuggingFaceHub.Progress.NONE);

        assertThat(later.find("orphan")).contains(model);
        assertThat(orphan.resolve("half.gguf")).doesNotExist();
        assertThat(orphan.resolve("orphan.gguf")).exists();
        assertThat(audit).anySatisfy(event -> assertThat(event.detail()).contains("removed " + orphan + ": a directory without a catalogue row"));
        try (var left = Files.list(store)) {
            assertThat(left.map(path -> path.getFileName().toString())).containsExactly("orphan");
        }
    }
}
