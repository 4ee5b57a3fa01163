package io.macfleet.models.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.runtime.RuntimeCluster;
import io.macfleet.secrets.SecretReference;
import io.macfleet.ssh.SshTarget;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarInputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The relay's jar and refusals (run as a real JVM), the chain's order along cables, placed file paths. */
class PlacementRelayTest {

    @TempDir
    Path directory;

    @Test
    void theRelayUsesNothingButTheJdkAndItsJarHoldsOnlyItsOwnClasses() throws Exception {
        String source = Files.readString(Path.of("src/main/java/io/macfleet/models/placement/PlacementRelay.java"));
        Matcher imports = Pattern.compile("(?m)^import (static )?([\\w.]+)").matcher(source);
        int count = 0;
        while (imports.find()) {
            count++;
            assertThat(imports.group(2)).matches("(java|javax)\\..*");
        }
        assertThat(count).isGreaterThan(10);
        assertThat(source.replace("package io.macfleet.models.placement;", "")).doesNotContain("io.macfleet.");
        try (JarInputStream jar = new JarInputStream(new java.io.ByteArrayInputStream(RelayJar.bytes()))) {
            assertThat(jar.getManifest().getMainAttributes().getValue("Main-Class")).isEqualTo(PlacementRelay.class.getName());
            for (var entry = jar.getNextJarEntry(); entry != null; entry = jar.getNextJarEntry()) {
                assertThat(entry.getName()).startsWith("io/macfleet/models/placement/PlacementRelay");
            }
        }
        assertThat(RelayJar.bytes()).isEqualTo(RelayJar.bytes());
    }

    @Test
    void theRelayRefusesTheWildcardAddress() throws Exception {
        Path jar = Files.write(directory.resolve("relay.jar"), RelayJar.bytes());
        Path key = Files.write(directory.resolve("key"), new byte[32]);
        for (String wildcard : List.of("0.0.0.0", "::")) {
            Process relay = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString(),
                    "--name", "studio-01", "--listen", wildcard, "--port", "1", "--key", key.toString(), "--root", directory.toString())
                    .redirectErrorStream(true).start();
            assertThat(relay.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(relay.exitValue()).isEqualTo(2);
            assertThat(new String(relay.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                    .contains("refusing to listen on the wildcard address " + wildcard);
        }
    }

    private static RuntimeCluster.Machine mac(int rank, String name, Map<String, String> addresses) {
        return new RuntimeCluster.Machine(rank, name, SshTarget.of(name, "127.0.0." + (rank + 1), "admin", SecretReference.of("env:NONE")),
                "127.0.0." + (rank + 1), 256, addresses);
    }

    @Test
    void theChainFollowsTheCablesAndUsesAMacThatHoldsTheFileOnlyAsABridge() {
        // A line a - b - c - d (as a ring with one cable missing): b holds the file already.
        List<RuntimeCluster.Machine> line = List.of(
                mac(0, "a", Map.of("b", "10.0.1.1")),
                mac(1, "b", Map.of("a", "10.0.1.2", "c", "10.0.2.1")),
                mac(2, "c", Map.of("b", "10.0.2.2", "d", "10.0.3.1")),
                mac(3, "d", Map.of("c", "10.0.3.2")));
        List<List<PlacementChain.Link>> chains = PlacementChain.plan(line, Set.of("a", "c", "d"));
        assertThat(chains).hasSize(1);
        List<PlacementChain.Link> chain = chains.getFirst();
        assertThat(chain).extracting(PlacementChain.Link::name).containsExactly("a", "b", "c", "d");
        assertThat(chain).extracting(PlacementChain.Link::store).containsExactly(true, false, true, true);
        assertThat(chain.get(0).listenAddress()).isEqualTo("127.0.0.1");
        assertThat(chain.get(0).upstreamAddress()).isEmpty();
        assertThat(chain.get(2).listenAddress()).isEqualTo("10.0.2.2");
        assertThat(chain.get(2).upstreamAddress()).contains("10.0.2.1");

        // Without b's cables the chain cannot pass through it: a and the rest form two chains.
        List<RuntimeCluster.Machine> split = List.of(line.get(0), mac(1, "b", Map.of()), line.get(2), line.get(3));
        assertThat(PlacementChain.plan(split, Set.of("a", "c", "d"))).extracting(c -> c.stream().map(PlacementChain.Link::name).toList())
                .containsExactly(List.of("a"), List.of("c", "d"));
        // Only the Macs that need it, and no bridge at the end.
        assertThat(PlacementChain.plan(line, Set.of("a", "b"))).extracting(c -> c.stream().map(PlacementChain.Link::name).toList())
                .containsExactly(List.of("a", "b"));
    }

    @Test
    void aChainFedByTheMacThatHoldsTheFileStartsThereAndReachesAMacWithoutACableOverTheManagementNetwork() {
        // The line a - b - c - d, the file held on c (model add --via c): c heads the chain, which runs c - b - a
        // along the cables and then c - d as a second chain (a path cannot come back through c).
        List<RuntimeCluster.Machine> line = List.of(
                mac(0, "a", Map.of("b", "10.0.1.1")),
                mac(1, "b", Map.of("a", "10.0.1.2", "c", "10.0.2.1")),
                mac(2, "c", Map.of("b", "10.0.2.2", "d", "10.0.3.1")),
                mac(3, "d", Map.of("c", "10.0.3.2")));
        List<List<PlacementChain.Link>> chains = PlacementChain.plan(line, Set.of("a", "b", "d"), java.util.Optional.of("c"));
        assertThat(chains).extracting(c -> c.stream().map(PlacementChain.Link::name).toList())
                .containsExactly(List.of("c", "b", "a"), List.of("c", "d"));
        List<PlacementChain.Link> first = chains.getFirst();
        // The source listens where the control host reaches it, and never stores.
        assertThat(first.get(0).listenAddress()).isEqualTo("127.0.0.3");
        assertThat(first.get(0).store()).isFalse();
        assertThat(first.get(1).listenAddress()).isEqualTo("10.0.2.1");
        assertThat(first.get(1).upstreamAddress()).contains("10.0.2.2");
        assertThat(chains.get(1).get(1).listenAddress()).isEqualTo("10.0.3.2");

        // d without cables: still fed by c, over the management addresses (never by the control host).
        List<RuntimeCluster.Machine> loose = List.of(line.get(0), line.get(1), mac(2, "c", Map.of("b", "10.0.2.2")), mac(3, "d", Map.of()));
        List<List<PlacementChain.Link>> withLoose = PlacementChain.plan(loose, Set.of("a", "b", "d"), java.util.Optional.of("c"));
        assertThat(withLoose).extracting(c -> c.stream().map(PlacementChain.Link::name).toList())
                .containsExactly(List.of("c", "b", "a"), List.of("c", "d"));
        assertThat(withLoose.get(1).get(1).listenAddress()).isEqualTo("127.0.0.4");
        assertThat(withLoose.get(1).get(1).upstreamAddress()).contains("127.0.0.3");
    }

    @Test
    void placedFilePathsStayUnderTheModelDirectory() {
        String sha = "0".repeat(64);
        assertThat(new PlacedFile(Path.of("x"), "m/model.safetensors", 1, sha).remotePath()).isEqualTo("/usr/local/macfleet/models/m/model.safetensors");
        for (String bad : List.of("/etc/passwd", "../x", "a/../../x", "", "a\\b")) {
            assertThatThrownBy(() -> new PlacedFile(Path.of("x"), bad, 1, sha)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("relative to /usr/local/macfleet/models");
        }
        assertThatThrownBy(() -> new PlacedFile(Path.of("x"), "a", 1, "ABC")).hasMessageContaining("64 lower-case hex digits");
    }
}
