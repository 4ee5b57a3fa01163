package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SshKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FileCopy against a simulated Mac's real SSH server: fresh, present, interrupted and resumed, corrupt partial. */
class FileCopyTest {

    private static final String REMOTE = "/opt/macfleet/model.bin";

    @TempDir
    Path directory;
    private SimulatedFleet fleet;
    private KeyPair key;
    private Path local;

    @BeforeEach
    void start() throws IOException {
        key = SshKeys.generate();
        fleet = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic())
                .macStudio("studio-01", 512, "26.2").build().start();
        Files.createDirectories(fleet.machine("studio-01").resolve("/opt/macfleet"));
        local = directory.resolve("model.bin");
        byte[] content = new byte[12 * 1024 * 1024 + 12345];
        new Random(17).nextBytes(content);
        Files.write(local, content);
    }

    @AfterEach
    void stop() {
        fleet.close();
    }

    private Path onMac(String path) {
        return fleet.machine("studio-01").resolve(path);
    }

    @Test
    void copiesVerifiesAndThenSkipsTheSameFile() throws IOException {
        List<long[]> reports = new ArrayList<>();
        try (SimulatedMacLink link = new SimulatedMacLink(fleet, "studio-01", key)) {
            CopyOutcome outcome = new FileCopy("studio-01", link.sftp, link.shell())
                    .copy(local, REMOTE, (done, total) -> reports.add(new long[]{done, total}));
            assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.COPIED);
            assertThat(outcome.bytesSent()).isEqualTo(Files.size(local));
            assertThat(outcome.sha256()).isEqualTo(FileCopy.sha256(local, Files.size(local)));
            assertThat(onMac(REMOTE)).hasSameBinaryContentAs(local);
            assertThat(onMac(REMOTE + ".partial")).doesNotExist();
            assertThat(reports.getLast()).containsExactly(Files.size(local), Files.size(local));
            assertThat(reports).hasSizeGreaterThan(10);
            for (int index = 1; index < reports.size(); index++) {
                assertThat(reports.get(index)[0]).isGreaterThanOrEqualTo(reports.get(index - 1)[0]);
            }

            CopyOutcome again = new FileCopy("studio-01", link.sftp, link.shell()).copy(local, REMOTE, CopyProgress.NONE);
            assertThat(again.kind()).isEqualTo(CopyOutcome.Kind.ALREADY_PRESENT);
            assertThat(again.bytesSent()).isZero();
        }
    }

    @Test
    void replacesAFileOfTheSameSizeButOtherContent() throws IOException {
        byte[] other = Files.readAllBytes(local);
        other[other.length / 2] ^= 1;
        Files.write(onMac(REMOTE), other);
        try (SimulatedMacLink link = new SimulatedMacLink(fleet, "studio-01", key)) {
            CopyOutcome outcome = new FileCopy("studio-01", link.sftp, link.shell()).copy(local, REMOTE, CopyProgress.NONE);
            assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.COPIED);
        }
        assertThat(onMac(REMOTE)).hasSameBinaryContentAs(local);
    }

    @Test
    void aCopyInterruptedByALostConnectionResumesFromItsVerifiedPartialFile() throws IOException {
        long size = Files.size(local);
        SimulatedMacLink first = new SimulatedMacLink(fleet, "studio-01", key);
        assertThatThrownBy(() -> new FileCopy("studio-01", first.sftp, first.shell()).copy(local, REMOTE, (done, total) -> {
            if (done >= total / 2) {
                try {
                    first.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        })).isInstanceOfAny(IOException.class, UncheckedIOException.class);
        assertThat(onMac(REMOTE)).doesNotExist();
        // The server still writes the requests that were in flight when the connection went: wait until it is done.
        long partial = settledSize(onMac(REMOTE + ".partial"));
        assertThat(partial).isPositive().isLessThan(size);

        try (SimulatedMacLink second = new SimulatedMacLink(fleet, "studio-01", key)) {
            List<Long> firstReport = new ArrayList<>();
            CopyOutcome outcome = new FileCopy("studio-01", second.sftp, second.shell()).copy(local, REMOTE, (done, total) -> {
                if (firstReport.isEmpty()) {
                    firstReport.add(done);
                }
            });
            assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.RESUMED);
            assertThat(outcome.resumedFrom()).isEqualTo(partial);
            assertThat(outcome.bytesSent()).isEqualTo(size - partial);
            assertThat(firstReport).containsExactly(partial);
        }
        assertThat(onMac(REMOTE)).hasSameBinaryContentAs(local);
        assertThat(onMac(REMOTE + ".partial")).doesNotExist();
    }

    @Test
    void aStripedCopyOverThreeConnectionsThatLosesOneResumesFromAVerifiedPrefix() throws IOException {
        byte[] content = new byte[40 * 1024 * 1024 + 777];
        new Random(23).nextBytes(content);
        Files.write(local, content);
        long size = content.length;
        List<SimulatedMacLink> links = new ArrayList<>();
        for (int index = 0; index < 3; index++) {
            links.add(new SimulatedMacLink(fleet, "studio-01", key));
        }
        long[] sentAtBreak = {-1};
        try {
            assertThatThrownBy(() -> new FileCopy("studio-01", links.stream().map(link -> link.sftp).toList(), links.getFirst().shell())
                    .copy(local, REMOTE, (done, total) -> {
                        if (done >= total * 3 / 4 && sentAtBreak[0] < 0) {
                            sentAtBreak[0] = done;
                            Thread.ofPlatform().start(() -> {
                                try {
                                    links.get(1).close();
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            });
                        }
                    })).isInstanceOf(IOException.class);
        } finally {
            for (SimulatedMacLink link : links) {
                link.close();
            }
        }
        assertThat(onMac(REMOTE)).doesNotExist();
        assertThat(settledSize(onMac(REMOTE + ".partial"))).isPositive();

        try (SimulatedMacLink second = new SimulatedMacLink(fleet, "studio-01", key);
             SimulatedMacLink third = new SimulatedMacLink(fleet, "studio-01", key)) {
            FileCopy copy = new FileCopy("studio-01", List.of(second.sftp, third.sftp), second.shell());
            CopyOutcome outcome = copy.copy(local, REMOTE, CopyProgress.NONE);
            assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.RESUMED);
            // Writes more than one window below the last one sent were acknowledged, so they are on the Mac: the resume
            // keeps them, less at most the margin in which a striped copy may have left holes.
            assertThat(outcome.resumedFrom()).isPositive().isGreaterThanOrEqualTo(sentAtBreak[0] - 2 * copy.resumeMargin());
            assertThat(outcome.bytesSent()).isEqualTo(size - outcome.resumedFrom());
            assertThat(outcome.sha256()).isEqualTo(FileCopy.sha256(local, size));
        }
        assertThat(onMac(REMOTE)).hasSameBinaryContentAs(local);
        assertThat(onMac(REMOTE + ".partial")).doesNotExist();
    }

    @Test
    void aStripedCopyWritesTheSameFileAsOneConnection() throws IOException {
        try (SimulatedMacLink first = new SimulatedMacLink(fleet, "studio-01", key);
             SimulatedMacLink second = new SimulatedMacLink(fleet, "studio-01", key)) {
            List<Long> reports = new ArrayList<>();
            CopyOutcome outcome = new FileCopy("studio-01", List.of(first.sftp, second.sftp), first.shell())
                    .copy(local, REMOTE, (done, total) -> reports.add(done));
            assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.COPIED);
            assertThat(reports).isSorted().doesNotHaveDuplicates().endsWith(Files.size(local)).hasSizeGreaterThan(10);
        }
        assertThat(onMac(REMOTE)).hasSameBinaryContentAs(local);
    }

    @Test
    void theDeploymentsSshRunGivesAStripedCopyThreeSftpChannels() throws IOException {
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "test");
        SimulatedFleet.Endpoint endpoint = fleet.endpoint("studio-01");
        io.macfleet.ssh.SshTransport transport = new io.macfleet.ssh.SshTransport(io.macfleet.ssh.SshSettings.defaults("test")
                .withAcceptNewHostKeys(true), new io.macfleet.ssh.InMemoryHostKeyStore(), event -> {
        });
        io.macfleet.ssh.SshTarget target = io.macfleet.ssh.SshTarget.of("studio-01", endpoint.host(), fleet.sshUser(),
                io.macfleet.secrets.SecretReference.of("file:" + keyFile)).withPort(endpoint.port());
        try (io.macfleet.ssh.SshRun run = transport.openRun()) {
            CopyOutcome outcome = run.onFleet(List.of(target), machine -> machine.withSftpStripes("copy", 3, channels -> {
                assertThat(channels).hasSize(3).doesNotHaveDuplicates();
                return new FileCopy("studio-01", channels, NodeDeployer.shell(machine)).copy(local, REMOTE, CopyProgress.NONE);
            })).getFirst().value();
            assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.COPIED);
        }
        assertThat(onMac(REMOTE)).hasSameBinaryContentAs(local);
    }

    private static long settledSize(Path file) throws IOException {
        long size = Files.size(file);
        for (int round = 0; round < 50; round++) {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            long now = Files.size(file);
            if (now == size) {
                return size;
            }
            size = now;
        }
        throw new AssertionError(file + " still grows after 10 s");
    }

    @Test
    void aPartialFileThatIsNotThePrefixIsStartedAgain() throws IOException {
        byte[] wrong = new byte[3 * 1024 * 1024];
        new Random(99).nextBytes(wrong);
        Files.write(onMac(REMOTE + ".partial"), wrong);
        try (SimulatedMacLink link = new SimulatedMacLink(fleet, "studio-01", key)) {
            CopyOutcome outcome = new FileCopy("studio-01", link.sftp, link.shell()).copy(local, REMOTE, CopyProgress.NONE);
            assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.COPIED);
            assertThat(outcome.resumedFrom()).isZero();
        }
        assertThat(onMac(REMOTE)).hasSameBinaryContentAs(local);
    }

    @Test
    void aMissingDirectoryOnTheMacIsAClearError() throws IOException {
        try (SimulatedMacLink link = new SimulatedMacLink(fleet, "studio-01", key)) {
            assertThatThrownBy(() -> new FileCopy("studio-01", link.sftp, link.shell()).copy(local, "/nowhere/model.bin", CopyProgress.NONE))
                    .isInstanceOf(IOException.class).hasMessageContaining("studio-01:/nowhere/model.bin.partial");
        }
    }
}
