package io.macfleet.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import net.schmizz.sshj.SSHClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scale benchmark (off by default): 200 simulated Macs in this JVM; start time; sw_vers latency through SSHJ with
 * 20 requests in flight. Run:
 * {@code ./mvnw -B -f control-plane.xml verify -Dtest=SimulatorBenchmarkTest -Dmacfleet.benchmarks=true -Dsurefire.failIfNoSpecifiedTests=false}
 * Optional: -Dmacfleet.benchmark.machines=200 -Dmacfleet.benchmark.requests=2000
 */
@EnabledIfSystemProperty(named = "macfleet.benchmarks", matches = "true")
class SimulatorBenchmarkTest {

    @Test
    void twoHundredMacs(@TempDir Path state) throws Exception {
        TestSupport.quietSshLogs();
        int machines = Integer.getInteger("macfleet.benchmark.machines", 200);
        int requests = Integer.getInteger("macfleet.benchmark.requests", 2000);
        int concurrency = 20;
        KeyPair key = SshKeys.generate();
        SimulatedFleet.Builder builder = SimulatedFleet.builder(state).authorizedKey(key.getPublic());
        for (int i = 1; i <= machines; i++) {
            builder.macStudio(String.format("studio-%03d", i), i % 2 == 0 ? 256 : 512, "26.2");
        }
        long startBegin = System.nanoTime();
        try (SimulatedFleet fleet = builder.build().start()) {
            double startSeconds = (System.nanoTime() - startBegin) / 1e9;
            int threads = java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount();

            long connectBegin = System.nanoTime();
            List<SSHClient> clients = Collections.synchronizedList(new ArrayList<>());
            List<String> names = fleet.machines().stream().map(SimulatedMac::name).toList();
            try (ExecutorService pool = Executors.newFixedThreadPool(concurrency)) {
                List<Future<SSHClient>> connecting = new ArrayList<>();
                for (String name : names) {
                    connecting.add(pool.submit(() -> SshClient.connect(fleet.endpoint(name), "admin", key)));
                }
                for (Future<SSHClient> future : connecting) {
                    clients.add(future.get());
                }
                double connectSeconds = (System.nanoTime() - connectBegin) / 1e9;

                List<Long> alone = new ArrayList<>();
                for (int n = 0; n < 200; n++) {
                    long begin = System.nanoTime();
                    SshClient.exec(clients.get(n % clients.size()), "sw_vers", null);
                    alone.add(System.nanoTime() - begin);
                }
                Collections.sort(alone);
                double aloneMedian = alone.get(alone.size() / 2) / 1e6;

                List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
                List<Future<?>> work = new ArrayList<>();
                long loadBegin = System.nanoTime();
                for (int worker = 0; worker < concurrency; worker++) {
                    int offset = worker;
                    work.add(pool.submit(() -> {
                        for (int n = offset; n < requests; n += concurrency) {
                            SSHClient client = clients.get(n % clients.size());
                            long begin = System.nanoTime();
                            SshClient.Answer answer = SshClient.exec(client, "sw_vers", null);
                            latencies.add(System.nanoTime() - begin);
                            if (!answer.stdout().startsWith("ProductName:")) {
                                throw new IllegalStateException("unexpected answer " + answer);
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> future : work) {
                    future.get();
                }
                double loadSeconds = (System.nanoTime() - loadBegin) / 1e9;
                List<Long> sorted = new ArrayList<>(latencies);
                Collections.sort(sorted);
                double median = sorted.get(sorted.size() / 2) / 1e6;
                double p95 = sorted.get((int) (sorted.size() * 0.95)) / 1e6;
                System.out.printf("%nSIMULATOR BENCHMARK (%d cores available)%n", Runtime.getRuntime().availableProcessors());
                System.out.printf("  %d simulated Macs started in %.2f s (JVM threads after start: %d)%n", machines, startSeconds, threads);
                System.out.printf("  %d SSHJ connections (connect + key exchange + public-key auth) in %.2f s%n", clients.size(), connectSeconds);
                System.out.printf("  sw_vers x %d, %d in flight: median %.1f ms, p95 %.1f ms, %.0f commands/s%n", requests, concurrency,
                        median, p95, requests / loadSeconds);
                System.out.printf("  sw_vers one at a time: median %.1f ms%n%n", aloneMedian);
                assertThat(latencies).hasSize(requests);
            } finally {
                for (SSHClient client : clients) {
                    client.close();
                }
            }
        }
    }
}
