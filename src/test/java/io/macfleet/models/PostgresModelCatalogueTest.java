package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.PostgresServer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The catalogue's tables (migration V11_27) on a real PostgreSQL server and on H2: the same statements on both. */
class PostgresModelCatalogueTest {

    @TempDir
    Path temporary;

    @Test
    void addFindListAndRemoveOnPostgresqlAndH2() throws Exception {
        Path gguf = TestModels.gguf(temporary.resolve("sources/m.gguf"), 15, 2048, 41);
        Path mlx = TestModels.mlx(temporary.resolve("sources/mlx"), 2, true);
        try (PostgresServer server = PostgresServer.start(); AgroalDataSource dataSource = server.database("models")) {
            contract(dataSource, temporary.resolve("postgres"), gguf, mlx);
        }
        try (AgroalDataSource dataSource = PostgresServer.h2("models")) {
            contract(dataSource, temporary.resolve("h2"), gguf, mlx);
        }
    }

    private static void contract(AgroalDataSource dataSource, Path home, Path gguf, Path mlx) throws Exception {
        ModelCatalogue catalogue = new ModelCatalogue(dataSource, event -> { }, home.resolve("models"), URI.create("http://127.0.0.1:9"),
                Optional.empty(), Optional.empty(), Clock.systemUTC());
        CatalogueModel first = catalogue.add("m", gguf.toString(), Optional.empty(), Optional.empty(), "cli:alice", HuggingFaceHub.Progress.NONE);
        CatalogueModel second = catalogue.add("mlx", mlx.toString(), Optional.empty(), Optional.empty(), "cli:alice", HuggingFaceHub.Progress.NONE);
        assertThat(catalogue.list()).containsExactly(first, second);
        assertThat(catalogue.find("mlx").orElseThrow().files()).hasSize(5);
        assertThat(catalogue.shape("m")).isEqualTo(new ModelShape(32, 8, 128, 8192));
        assertThat(catalogue.weights(first)).isEqualTo(home.resolve("models/m/m.gguf"));
        assertThatThrownBy(() -> catalogue.add("m", gguf.toString(), Optional.empty(), Optional.empty(), "cli:alice",
                HuggingFaceHub.Progress.NONE)).isInstanceOf(ModelRefused.class);
        assertThat(catalogue.remove("m", "cli:alice")).isTrue();
        assertThat(catalogue.list()).containsExactly(second);
        assertThat(Files.exists(home.resolve("models/m"))).isFalse();
    }
}
