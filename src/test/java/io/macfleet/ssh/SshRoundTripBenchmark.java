package io.macfleet.ssh;

import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One {@code sw_vers} round trip per machine through macfleet's SSH layer against a bare SSHJ exec on the
 * same local MINA servers, so the overhead of the layer (quoting, host key pinning, caps, audit, pool) is
 * visible. Skipped unless asked for:
 * {@code ./mvnw -B -f control-plane.xml test -Dtest=SshRoundTripBenchmark -Dmacfleet.benchmarks=true}
 */
@EnabledIfSystemProperty(named = "macfleet.benchmarks", matches = "true")
class SshRoundTripBenchmark {

    private static final String SW_VERS = "ProductName:\t\tmacOS\nProductVersion:\t\t26.2\nBuildVersion:\t\t25C56\n";
    private static final int MACHINES = 4;
    private static final int WARMUP = 20;
    private static final int ROUNDS = 100;

    @Test
    void swVersRoundTrip() throws Exception {
        List<TestSshServer> servers = new ArrayList<>();
        StringBuilder report = new StringBuilder();
        try {
            for (int index = 0; index < MACHINES; index++) {
                // Half the servers as MINA comes (Nagle on), half with TCP_NODELAY, as the server side matters too.
                servers.add(index < MACHINES / 2 ? TestSshServer.startWithNagle(TestSshServer.answer(SW_VERS, 0))
                        : TestSshServer.start(TestSshServer.answer(SW_VERS, 0)));
            }
            DefaultConfig config = new DefaultConfig();
            KeyProvider key;
            try (SSHClient loader = new SSHClient(config)) {
                key = loader.loadKeys(Files.readString(TestSshServer.TestKeys.ED25519.path()), null, null);
            }
            SshTransport transport = new SshTransport(SshSettings.defaults("benchmark").withAcceptNewHostKeys(true),
                    new InMemoryHostKeyStore(), new InMemoryAuditLog());

            report.append("sw_vers round trip per machine, local MINA servers, ").append(ROUNDS)
                    .append(" rounds after ").append(WARMUP).append(" warm-up (ms: median / p90)\n");
            for (int index = 0; index < MACHINES; index++) {
                TestSshServer server = servers.get(index);
                String machine = "studio-0" + (index + 1);

                double[][] bareConnected = new double[2][ROUNDS];
                double[][] bareCold = new double[2][ROUNDS / 10];
                for (int noDelay = 0; noDelay < 2; noDelay++) {
                    try (SSHClient client = bareClient(config, server, key, noDelay == 1)) {
                        for (int round = 0; round < WARMUP + ROUNDS; round++) {
                            long start = System.nanoTime();
                            assertThat(bareExec(client)).isEqualTo(SW_VERS);
                            if (round >= WARMUP) {
                                bareConnected[noDelay][round - WARMUP] = millis(start);
                            }
                        }
                    }
                    for (int round = 0; round < bareCold[noDelay].length; round++) {
                        long start = System.nanoTime();
                        try (SSHClient client = bareClient(config, server, key, noDelay == 1)) {
                            assertThat(bareExec(client)).isEqualTo(SW_VERS);
                        }
                        bareCold[noDelay][round] = millis(start);
                    }
                }

                double[] layerConnected = new double[ROUNDS];
                double[] layerCold = new double[ROUNDS / 10];
                SshTarget target = server.target(machine);
                try (SshRun run = transport.openRun()) {
                    for (int round = 0; round < WARMUP + ROUNDS; round++) {
                        long start = System.nanoTime();
                        assertThat(run.execute(target, Command.reading("sw_vers")).requireSuccess().stdout()).isEqualTo(SW_VERS);
                        if (round >= WARMUP) {
                            layerConnected[round - WARMUP] = millis(start);
                        }
                    }
                }
                for (int round = 0; round < layerCold.length; round++) {
                    long start = System.nanoTime();
                    try (SshRun run = transport.openRun()) {
                        run.execute(target, Command.reading("sw_vers")).requireSuccess();
                    }
                    layerCold[round] = millis(start);
                }
                report.append(("%s (server TCP_NODELAY %s)%n  exec on an open connection: bare SSHJ %s, bare SSHJ+TCP_NODELAY %s,"
                        + " macfleet %s%n  connect+auth+exec: bare SSHJ %s, bare SSHJ+TCP_NODELAY %s, macfleet %s%n")
                        .formatted(machine, index < MACHINES / 2 ? "off" : "on", stats(bareConnected[0]),
                                stats(bareConnected[1]), stats(layerConnected), stats(bareCold[0]), stats(bareCold[1]),
                                stats(layerCold)));
            }
        } finally {
            for (TestSshServer server : servers) {
                server.close();
            }
        }
        System.out.println(report);
        Files.writeString(Path.of("target", "ssh-round-trip-benchmark.txt"), report);
    }

    @Test
    void fleetOfTwoHundred() throws Exception {
        List<TestSshServer> servers = new ArrayList<>();
        StringBuilder report = new StringBuilder();
        try {
            List<SshTarget> targets = new ArrayList<>();
            for (int index = 0; index < 200; index++) {
                TestSshServer server = TestSshServer.start(TestSshServer.answer(SW_VERS, 0));
                servers.add(server);
                targets.add(server.target("studio-%03d".formatted(index + 1)));
            }
            InMemoryHostKeyStore hostKeys = new InMemoryHostKeyStore();
            for (int parallelism : new int[] {32, 64, 32}) {
                SshTransport transport = new SshTransport(SshSettings.defaults("benchmark").withAcceptNewHostKeys(true)
                        .withParallelism(parallelism), hostKeys, new InMemoryAuditLog());
                long start = System.nanoTime();
                List<MachineResult<String>> results = transport.onFleet(targets,
                        machine -> machine.execute(Command.reading("sw_vers")).requireSuccess().stdout());
                double elapsed = millis(start);
                assertThat(results).allSatisfy(result -> assertThat(result.succeeded()).as(result.describe()).isTrue());
                report.append("200 machines, connect+auth+sw_vers, parallelism %d: %.0f ms%n".formatted(parallelism, elapsed));
            }
        } finally {
            for (TestSshServer server : servers) {
                server.close();
            }
        }
        System.out.println(report);
        Files.writeString(Path.of("target", "ssh-fleet-benchmark.txt"), report);
    }

    private static SSHClient bareClient(DefaultConfig config, TestSshServer server, KeyProvider key, boolean noDelay)
            throws IOException {
        SSHClient client = new SSHClient(config);
        if (noDelay) {
            client.setSocketFactory(new javax.net.SocketFactory() {
                @Override
                public java.net.Socket createSocket() throws IOException {
                    java.net.Socket socket = new java.net.Socket();
                    socket.setTcpNoDelay(true);
                    return socket;
                }

                @Override
                public java.net.Socket createSocket(String host, int port) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public java.net.Socket createSocket(String host, int port, java.net.InetAddress local, int localPort) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public java.net.Socket createSocket(java.net.InetAddress host, int port) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public java.net.Socket createSocket(java.net.InetAddress host, int port, java.net.InetAddress local, int localPort) {
                    throw new UnsupportedOperationException();
                }
            });
        }
        client.addHostKeyVerifier(server.hostKeyFingerprint());
        client.connect("127.0.0.1", server.port());
        client.authPublickey(TestSshServer.USER, key);
        return client;
    }

    private static String bareExec(SSHClient client) throws IOException {
        try (Session session = client.startSession(); Session.Command command = session.exec("sw_vers")) {
            String output = new String(command.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            command.join(10, TimeUnit.SECONDS);
            return output;
        }
    }

    private static double millis(long start) {
        return (System.nanoTime() - start) / 1e6;
    }

    private static String stats(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return "%.2f / %.2f".formatted(sorted[sorted.length / 2], sorted[(int) (sorted.length * 0.9)]);
    }
}
