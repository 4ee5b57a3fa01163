package io.macfleet.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Secret references may only name secret directories and MACFLEET_ variables (issue 14, item 8). */
class SecretPolicyTest {

    @TempDir
    Path home;

    private SecretPolicy policy() {
        return new SecretPolicy(List.of(home.resolve("secrets"), home.resolve("ssh")), "MACFLEET_");
    }

    @Test
    void filesOutsideTheSecretDirectoriesAreRefused() {
        for (String reference : List.of("file:/etc/shadow", "file:/proc/self/environ", "file:../../etc/passwd",
                "file:" + home.resolve("secrets") + "/../../../etc/passwd", "file:" + home.resolve("elsewhere"))) {
            assertThat(policy().problem(SecretReference.of(reference))).as(reference)
                    .hasValueSatisfying(problem -> assertThat(problem).contains("not allowed", home.resolve("secrets").toString()));
        }
        assertThat(policy().problem(SecretReference.of("file:" + home.resolve("secrets").resolve("volume-owner")))).isEmpty();
        assertThat(policy().problem(SecretReference.of("file:" + home.resolve("ssh").resolve("id_ed25519")))).isEmpty();
    }

    @Test
    void aSymbolicLinkOutOfASecretDirectoryIsRefused() throws Exception {
        Path secrets = Files.createDirectories(home.resolve("secrets"));
        Path outside = Files.writeString(home.resolve("outside"), "not a secret of ours");
        Path link = Files.createSymbolicLink(secrets.resolve("innocent"), outside);
        assertThat(policy().problem(SecretReference.of("file:" + link)))
                .hasValueSatisfying(problem -> assertThat(problem).contains("symbolic link"));
        Path inside = Files.writeString(secrets.resolve("real"), "secret");
        Files.createSymbolicLink(secrets.resolve("alias"), inside);
        assertThat(policy().problem(SecretReference.of("file:" + secrets.resolve("alias")))).isEmpty();
    }

    @Test
    void environmentVariablesNeedThePrefix() {
        assertThat(policy().problem(SecretReference.of("env:PATH")))
                .hasValueSatisfying(problem -> assertThat(problem).contains("must start with MACFLEET_"));
        assertThat(policy().problem(SecretReference.of("env:MACFLEET_VOLUME_OWNER_PASSWORD"))).isEmpty();
    }

    @Test
    void theDefaultsAreTheStateDirectorysSecretsAndTheUsersSsh() {
        SecretPolicy defaults = SecretPolicy.defaults(home);
        assertThat(defaults.directories()).containsExactly(home.resolve("secrets"), Path.of(System.getProperty("user.home"), ".ssh"));
        assertThat(defaults.environmentPrefix()).isEqualTo("MACFLEET_");
    }

    @Test
    void anInventoryNamingServerSecretsIsRefusedAtLoadTimeWithPositions() throws Exception {
        Files.writeString(home.resolve("fleet.yaml"), """
                defaults:
                  ssh:
                    user: admin
                    privateKey: file:/etc/shadow
                  volumeOwner:
                    user: admin
                    password: env:PATH
                machines:
                  - name: studio-01
                    address: 10.0.0.1
                """);
        LoadResult result = InventoryLoader.load(home);
        assertThat(result.valid()).isFalse();
        assertThat(result.errors()).anySatisfy(error -> {
            assertThat(error.line()).isEqualTo(4);
            assertThat(error.message()).contains("ssh.privateKey", "file:/etc/shadow is not allowed");
        });
        assertThat(result.errors()).anySatisfy(error -> {
            assertThat(error.line()).isEqualTo(7);
            assertThat(error.message()).contains("env:PATH is not allowed");
        });
    }

    @Test
    void aStoredReferenceIsCheckedAgainWhenUsed() {
        assertThatThrownBy(() -> SecretReference.of("env:PATH").resolve(Map.of("PATH", "/usr/bin")))
                .isInstanceOf(SecretUnavailableException.class).hasMessageContaining("not allowed");
        assertThat(SecretReference.of("env:MACFLEET_X").resolve(Map.of("MACFLEET_X", "value"))).isEqualTo("value");
    }
}
