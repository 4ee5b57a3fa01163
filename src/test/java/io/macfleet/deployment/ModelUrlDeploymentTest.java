package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SshKeys;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --model URL}: each simulated Mac fetches the model itself with its (simulated) curl from a small HTTP server
 * with Range support, resumes an interrupted download, verifies the SHA-256 there, and a 404 names the Mac and the URL.
 * Staging only (no node is started): the copy is what is under test.
 */
class ModelUrlDeploymentTest {

    private static final Pattern RANGE = Pattern.compile("bytes=(\\d+)-");

    @TempDir
    Path directory;
    private SimulatedFleet fleet;
    private SshTransport transport;
    private final List<RankTarget> ranks = new ArrayList<>();
    private HttpServer server;
    private byte[] model;
    /** The server answers a model request with this many bytes at most, then drops the connection; negative: all. */
    private final AtomicLong dropAfter = new AtomicLong(-1);
    private final List<String> requests = new CopyOnWriteArrayList<>();
    /** Staging copies the jar and does not run it: a small jar with a version stands in for the node's. */
    private Path nodeJar;

    @BeforeEach
    void start() throws Exception {
        KeyPair key = SshKeys.generate();
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "test");
        fleet = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic()).basePort(0)
                .macStudio("studio-01", 512, "26.2").macStudio("studio-02", 512, "26.2").build().start();
        transport = new SshTransport(SshSettings.defaults("test").withAcceptNewHostKeys(true), new InMemoryHostKeyStore(), event -> {
        });
        int port = NodeJars.freePortRange(4);
        for (int i = 0; i < 2; i++) {
            String name = "studio-0" + (i + 1);
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(name);
            SshTarget target = SshTarget.of(name, endpoint.host(), fleet.sshUser(), SecretReference.of("file:" + keyFile)).withPort(endpoint.port());
            ranks.add(RankTarget.of(i, name, target, endpoint.host(), 512, port));
        }
        nodeJar = directory.resolve("inference-node-0.9.0-test.jar");
        java.util.jar.Manifest manifest = new java.util.jar.Manifest();
        manifest.getMainAttributes().put(java.util.jar.Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(java.util.jar.Attributes.Name.IMPLEMENTATION_VERSION, "0.9.0-test");
        try (var jar = new java.util.jar.JarOutputStream(Files.newOutputStream(nodeJar), manifest)) {
            jar.putNextEntry(new java.util.zip.ZipEntry("placeholder.txt"));
            jar.write("stands in for the inference node".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        model = new byte[3 * 1024 * 1024 + 4321];
        new Random(5).nextBytes(model);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::answer);
        server.start();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    /** GET /model.gguf with Range support (206 and Content-Range, 416 past the end); anything else is a 404. */
    private void answer(HttpExchange exchange) throws IOException {
        String range = exchange.getRequestHeaders().getFirst("Range");
        requests.add(exchange.getRequestURI().getPath() + (range == null ? "" : " " + range));
        try (exchange) {
            if (!exchange.getRequestURI().getPath().equals("/model.gguf")) {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            int from = 0;
            if (range != null) {
                Matcher matcher = RANGE.matcher(range);
                assertThat(matcher.matches()).as(range).isTrue();
                from = Integer.parseInt(matcher.group(1));
                if (from >= model.length) {
                    exchange.getResponseHeaders().add("Content-Range", "bytes */" + model.length);
                    exchange.sendResponseHeaders(416, -1);
                    return;
                }
                exchange.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + (model.length - 1) + "/" + model.length);
            }
            exchange.sendResponseHeaders(range == null ? 200 : 206, model.length - from);
            OutputStream body = exchange.getResponseBody();
            long limit = dropAfter.get();
            int length = limit < 0 ? model.length - from : (int) Math.min(limit, model.length - from);
            body.write(model, from, length);
            body.flush();
            // Closing a fixed-length body that is short makes the JDK's server drop the connection.
        }
    }

    private URI url(String path) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    private NodeDeployer.Plan plan(NodeRelease release) {
        String clusterFile = NodeClusterConfig.render("llm-u", "tensor", ranks, List.of());
        return new NodeDeployer.Plan("llm-u", "tensor", ranks, release, clusterFile, List.of("-Xmx192m"), 1);
    }

    private List<NodeDeployer.Staged> stage(NodeRelease release) {
        try (SshRun run = transport.openRun()) {
            return new NodeDeployer(Duration.ofSeconds(120)).stage(run, plan(release), NodeDeployer.Listener.NONE);
        }
    }

    @Test
    void eachMacDownloadsTheModelResumesAnInterruptedDownloadWithARangeAndVerifiesIt() throws Exception {
        NodeRelease release = NodeRelease.of(nodeJar, url("/model.gguf"), FileCopy.sha256(write(model), model.length), model.length);
        dropAfter.set(1024 * 1024);
        assertThatThrownBy(() -> stage(release)).isInstanceOf(NodeDeployer.DeployFailedException.class)
                .hasMessageContaining("studio-01").hasMessageContaining("download of " + url("/model.gguf"))
                .hasMessageContaining("failed (exit 18): curl: (18) transfer closed with ").hasMessageContaining(" bytes remaining to read")
                .hasMessageContaining("run the deployment again to resume it");
        List<String> resumes = new ArrayList<>();
        for (RankTarget rank : ranks) {
            // What the simulated curl got before the drop (the JDK's HTTP client may lose the last few bytes it held).
            long partial = Files.size(fleet.machine(rank.machine()).resolve(NodeLayout.staged(release.modelPath()) + ".partial"));
            assertThat(partial).isPositive().isLessThanOrEqualTo(1024 * 1024);
            assertThat(fleet.machine(rank.machine()).resolve(release.modelPath())).doesNotExist();
            resumes.add("/model.gguf bytes=" + partial + "-");
        }

        requests.clear();
        dropAfter.set(-1);
        List<NodeDeployer.Staged> staged = stage(release);
        assertThat(staged).extracting(NodeDeployer.Staged::model).containsOnly(CopyOutcome.Kind.COPIED);
        // Each Mac asked only for what it did not have.
        assertThat(requests).containsExactlyInAnyOrderElementsOf(resumes);
        for (RankTarget rank : ranks) {
            assertThat(fleet.machine(rank.machine()).resolve(release.modelPath())).hasBinaryContent(model);
            assertThat(fleet.machine(rank.machine()).resolve(NodeLayout.staged(release.modelPath()) + ".partial")).doesNotExist();
        }

        requests.clear();
        assertThat(stage(release)).extracting(NodeDeployer.Staged::model).containsOnly(CopyOutcome.Kind.ALREADY_PRESENT);
        assertThat(requests).isEmpty();
    }

    @Test
    void aDownloadThatFinishedBeforeTheDeploymentWasInterruptedIsVerifiedNotFetchedAgain() throws Exception {
        NodeRelease release = NodeRelease.of(nodeJar, url("/model.gguf"), FileCopy.sha256(write(model), model.length), model.length);
        for (RankTarget rank : ranks) {
            Path partial = fleet.machine(rank.machine()).resolve(NodeLayout.staged(release.modelPath()) + ".partial");
            Files.createDirectories(partial.getParent());
            Files.write(partial, model);
        }
        assertThat(stage(release)).extracting(NodeDeployer.Staged::model).containsOnly(CopyOutcome.Kind.COPIED);
        // A resume would have asked for bytes=<size>-, answered 416, which curl --fail turns into exit 22.
        assertThat(requests).isEmpty();
        assertThat(fleet.machine("studio-02").resolve(release.modelPath())).hasBinaryContent(model);
    }

    @Test
    void aMissingModelIsAClearErrorNamingTheMacAndTheUrl() throws Exception {
        NodeRelease release = NodeRelease.of(nodeJar, url("/missing.gguf"), FileCopy.sha256(write(model), model.length), model.length);
        assertThatThrownBy(() -> stage(release)).isInstanceOf(NodeDeployer.DeployFailedException.class)
                .hasMessageContaining("studio-01").hasMessageContaining("studio-02")
                .hasMessageContaining("download of " + url("/missing.gguf") + " on studio-01 failed (exit 22): curl: (22) The requested URL returned error: 404");
        assertThat(fleet.machine("studio-01").resolve(release.modelPath())).doesNotExist();
    }

    @Test
    void aUrlWithCredentialsIsRefusedBeforeAnyMacIsTouched() {
        assertThatThrownBy(() -> NodeRelease.of(nodeJar, URI.create("https://alice:secret@models.example/m.gguf"), "a".repeat(64), 10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not carry credentials");
    }

    private Path write(byte[] content) throws IOException {
        Path file = directory.resolve("model.gguf");
        Files.write(file, content);
        return file;
    }
}
