package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SshKeys;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.schmizz.sshj.DefaultConfig;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Copy throughput of {@link FileCopy} against OpenSSH's scp (SFTP mode, the default since OpenSSH 9.0) of the same
 * 256 MiB file to the same simulated Mac, median of 3 runs each, alternating. FileCopy's end-to-end time includes
 * hashing the local file and the Mac's shasum of the copy (scp verifies nothing); its transfer time leaves both out.
 * Skipped unless asked for:
 * {@code ./mvnw -B -o -f control-plane.xml test -Dtest=FileCopyBenchmark -Dmacfleet.benchmarks=true}
 */
@EnabledIfSystemProperty(named = "macfleet.benchmarks", matches = "true")
class FileCopyBenchmark {

    private static final int MEGABYTES = 256;
    private static final int RUNS = 3;

    @Test
    void fileCopyAgainstScp(@TempDir Path directory) throws Exception {
        Path scp = Path.of("/usr/bin/scp");
        assertThat(scp).as("OpenSSH scp").isExecutable();
        KeyPair key = SshKeys.generate();
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "macfleet-benchmark");
        Path local = directory.resolve("model.bin");
        byte[] block = new byte[1 << 20];
        Random random = new Random(42);
        try (OutputStream out = Files.newOutputStream(local)) {
            for (int index = 0; index < MEGABYTES; index++) {
                random.nextBytes(block);
                out.write(block);
            }
        }
        long size = Files.size(local);
        double[] scpSeconds = new double[RUNS];
        double[] copySeconds = new double[RUNS];
        double[] transferSeconds = new double[RUNS];
        double[] gcmSeconds = new double[RUNS];
        try (SimulatedFleet fleet = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic())
                .macStudio("studio-01", 512, "26.2").build().start()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint("studio-01");
            Files.createDirectories(fleet.machine("studio-01").resolve("/opt/macfleet"));
            Path scpTarget = fleet.machine("studio-01").resolve("/opt/macfleet/scp.bin");
            Path copyTarget = fleet.machine("studio-01").resolve("/opt/macfleet/model.bin");
            for (int run = 0; run < RUNS; run++) {
                Files.deleteIfExists(scpTarget);
                long start = System.nanoTime();
                Process process = new ProcessBuilder(scp.toString(), "-q", "-F", "/dev/null", "-i", keyFile.toString(),
                        "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                        "-o", "IdentitiesOnly=yes", "-P", String.valueOf(endpoint.port()), local.toString(),
                        "admin@" + endpoint.host() + ":/opt/macfleet/scp.bin").redirectErrorStream(true).start();
                String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(process.waitFor(600, TimeUnit.SECONDS)).isTrue();
                scpSeconds[run] = (System.nanoTime() - start) / 1e9;
                assertThat(process.exitValue()).as(output).isZero();
                assertThat(Files.size(scpTarget)).isEqualTo(size);

                Files.deleteIfExists(copyTarget);
                try (SimulatedMacLink link = new SimulatedMacLink(fleet, "studio-01", key)) {
                    FileCopy copy = new FileCopy("studio-01", link.sftp, link.shell());
                    long[] firstAndLast = new long[2];
                    start = System.nanoTime();
                    CopyOutcome outcome = copy.copy(local, "/opt/macfleet/model.bin", (done, total) -> {
                        long now = System.nanoTime();
                        if (done == 0) {
                            firstAndLast[0] = now;
                        }
                        firstAndLast[1] = now;
                    });
                    copySeconds[run] = (System.nanoTime() - start) / 1e9;
                    // From the first write to the last one queued; flush() of the last acknowledgements is small.
                    transferSeconds[run] = (firstAndLast[1] - firstAndLast[0]) / 1e9;
                    assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.COPIED);
                }
            }
            // The same with AES-128-GCM preferred: SSHJ's default order puts chacha20-poly1305 first, computed in
            // Java by BouncyCastle, where AES-GCM runs on the CPU's AES instructions through the JDK.
            DefaultConfig gcmFirst = new DefaultConfig();
            List<net.schmizz.sshj.common.Factory.Named<net.schmizz.sshj.transport.cipher.Cipher>> ciphers =
                    new ArrayList<>(gcmFirst.getCipherFactories());
            ciphers.sort(java.util.Comparator.comparing(factory -> factory.getName().startsWith("aes128-gcm") ? 0 : 1));
            gcmFirst.setCipherFactories(ciphers);
            for (int run = 0; run < RUNS; run++) {
                Files.deleteIfExists(copyTarget);
                try (SimulatedMacLink link = new SimulatedMacLink(fleet, "studio-01", key, gcmFirst)) {
                    long[] firstAndLast = new long[2];
                    new FileCopy("studio-01", link.sftp, link.shell()).copy(local, "/opt/macfleet/model.bin", (done, total) -> {
                        long now = System.nanoTime();
                        if (done == 0) {
                            firstAndLast[0] = now;
                        }
                        firstAndLast[1] = now;
                    });
                    gcmSeconds[run] = (firstAndLast[1] - firstAndLast[0]) / 1e9;
                }
            }
        }
        double scpMedian = median(scpSeconds);
        double copyMedian = median(copySeconds);
        double transferMedian = median(transferSeconds);
        double megabytes = size / 1e6;
        String load = Files.readString(Path.of("/proc/loadavg")).strip();
        System.out.printf("%nFileCopy vs scp, %d MiB file to one simulated Mac over loopback, %s, load %s, %d cores%n",
                MEGABYTES, Instant.now(), load, Runtime.getRuntime().availableProcessors());
        System.out.printf("scp (OpenSSH %s, SFTP mode): runs %s s, median %.2f s = %.1f MB/s%n", openSshVersion(),
                Arrays.toString(scpSeconds), scpMedian, megabytes / scpMedian);
        System.out.printf("FileCopy transfer only:      runs %s s, median %.2f s = %.1f MB/s, ratio to scp %.2f%n",
                Arrays.toString(transferSeconds), transferMedian, megabytes / transferMedian, scpMedian / transferMedian);
        System.out.printf("FileCopy end to end (local hash + transfer + Mac's shasum + rename): runs %s s, median %.2f s"
                + " = %.1f MB/s, ratio to scp %.2f%n", Arrays.toString(copySeconds), copyMedian, megabytes / copyMedian,
                scpMedian / copyMedian);
        double gcmMedian = median(gcmSeconds);
        System.out.printf("FileCopy transfer only, aes128-gcm preferred: runs %s s, median %.2f s = %.1f MB/s, ratio to scp %.2f%n",
                Arrays.toString(gcmSeconds), gcmMedian, megabytes / gcmMedian, scpMedian / gcmMedian);
    }

    /**
     * The path `macfleet node deploy` takes: FileCopy on an SFTP channel of an {@link io.macfleet.ssh.SshRun} connection
     * ({@code SshRun.withSftp}, host key pinned, the run's SSHJ configuration), shasum through the run's commands;
     * against scp of the same file to the same simulated Mac, alternating, median of {@value #RUNS} each, end to end.
     */
    @Test
    void deploymentPathAgainstScp(@TempDir Path directory) throws Exception {
        KeyPair key = SshKeys.generate();
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "macfleet-benchmark");
        Path local = directory.resolve("model.bin");
        byte[] block = new byte[1 << 20];
        Random random = new Random(42);
        try (OutputStream out = Files.newOutputStream(local)) {
            for (int index = 0; index < MEGABYTES; index++) {
                random.nextBytes(block);
                out.write(block);
            }
        }
        long size = Files.size(local);
        double[] scpSeconds = new double[RUNS];
        double[] deploySeconds = new double[RUNS];
        double[] scpGcmSeconds = new double[RUNS];
        int connections = Integer.getInteger("benchmark.connections", FileCopy.connectionsFor(size));
        String scpCipher = "?";
        String scpGcmCipher = "?";
        try (SimulatedFleet fleet = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic())
                .macStudio("studio-01", 512, "26.2").build().start()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint("studio-01");
            Files.createDirectories(fleet.machine("studio-01").resolve("/opt/macfleet"));
            Path scpTarget = fleet.machine("studio-01").resolve("/opt/macfleet/scp.bin");
            Path copyTarget = fleet.machine("studio-01").resolve("/opt/macfleet/model.bin");
            io.macfleet.ssh.SshTransport transport = new io.macfleet.ssh.SshTransport(io.macfleet.ssh.SshSettings.defaults("benchmark")
                    .withAcceptNewHostKeys(true), new io.macfleet.ssh.InMemoryHostKeyStore(), event -> {
            });
            io.macfleet.ssh.SshTarget target = io.macfleet.ssh.SshTarget.of("studio-01", endpoint.host(), fleet.sshUser(),
                    io.macfleet.secrets.SecretReference.of("file:" + keyFile)).withPort(endpoint.port());
            for (int run = 0; run < RUNS; run++) {
                Files.deleteIfExists(scpTarget);
                long start = System.nanoTime();
                String output = scp(keyFile, endpoint, local, List.of());
                scpSeconds[run] = (System.nanoTime() - start) / 1e9;
                scpCipher = negotiatedCipher(output);

                Files.deleteIfExists(scpTarget);
                start = System.nanoTime();
                output = scp(keyFile, endpoint, local, List.of("-c", "aes128-gcm@openssh.com"));
                scpGcmSeconds[run] = (System.nanoTime() - start) / 1e9;
                scpGcmCipher = negotiatedCipher(output);

                Files.deleteIfExists(copyTarget);
                try (io.macfleet.ssh.SshRun sshRun = transport.openRun()) {
                    start = System.nanoTime();
                    CopyOutcome outcome = sshRun.onFleet(List.of(target), machine -> machine.withSftpStripes("benchmark",
                            connections, channels ->
                            new FileCopy("studio-01", channels, NodeDeployer.shell(machine)).copy(local, "/opt/macfleet/model.bin", CopyProgress.NONE)))
                            .getFirst().value();
                    deploySeconds[run] = (System.nanoTime() - start) / 1e9;
                    assertThat(outcome.kind()).isEqualTo(CopyOutcome.Kind.COPIED);
                    assertThat(outcome.size()).isEqualTo(size);
                }
            }
        }
        double scpMedian = median(scpSeconds);
        double scpGcmMedian = median(scpGcmSeconds);
        double deployMedian = median(deploySeconds);
        double megabytes = size / 1e6;
        System.out.printf("%nDeployment path (SshRun.withSftpStripes + FileCopy over %d connection(s), aes128-gcm@openssh.com,"
                + " end to end incl. local hash and the Mac's shasum) vs scp (%s), %d MiB to one simulated Mac, %s, load %s,"
                + " %d cores%n", connections, openSshVersion(), MEGABYTES, Instant.now(),
                Files.readString(Path.of("/proc/loadavg")).strip(), Runtime.getRuntime().availableProcessors());
        System.out.printf("scp (negotiated %s):    runs %s s, median %.2f s = %.1f MB/s%n", scpCipher,
                Arrays.toString(scpSeconds), scpMedian, megabytes / scpMedian);
        System.out.printf("scp -c (negotiated %s): runs %s s, median %.2f s = %.1f MB/s%n", scpGcmCipher,
                Arrays.toString(scpGcmSeconds), scpGcmMedian, megabytes / scpGcmMedian);
        System.out.printf("deployment:  runs %s s, median %.2f s = %.1f MB/s%n", Arrays.toString(deploySeconds),
                deployMedian, megabytes / deployMedian);
        System.out.printf("RATIO deployment/scp = %.2f (scp's default cipher), %.2f (scp with the same cipher)%n",
                scpMedian / deployMedian, scpGcmMedian / deployMedian);
    }

    /** scp of the file to the simulated Mac, verbose so that the negotiated cipher can be read; returns its output. */
    private static String scp(Path keyFile, SimulatedFleet.Endpoint endpoint, Path local, List<String> options) throws Exception {
        List<String> command = new ArrayList<>(List.of("/usr/bin/scp", "-v", "-F", "/dev/null", "-i", keyFile.toString(),
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                "-o", "IdentitiesOnly=yes", "-P", String.valueOf(endpoint.port())));
        command.addAll(options);
        command.addAll(List.of(local.toString(), "admin@" + endpoint.host() + ":/opt/macfleet/scp.bin"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(600, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    /** From OpenSSH's "debug1: kex: client->server cipher: X MAC: Y compression: Z". */
    private static String negotiatedCipher(String verboseOutput) {
        return verboseOutput.lines().filter(line -> line.contains("kex: client->server cipher:")).findFirst()
                .map(line -> line.substring(line.indexOf("cipher:") + 7).strip().split(" ")[0]).orElse("?");
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static String openSshVersion() throws IOException, InterruptedException {
        Process process = new ProcessBuilder("ssh", "-V").redirectErrorStream(true).start();
        String version = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        process.waitFor();
        return version;
    }
}
