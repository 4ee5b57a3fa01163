package io.macfleet.models.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.deployment.FileCopy;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.NodeLayout;
import io.macfleet.runtime.RuntimeCluster;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * The figures for placement on four simulated Macs (base address 127.0.143.11): the bytes the control host
 * sends, the wall time against copying the same file to one Mac (through the same relay, and through today's striped
 * SFTP copy of {@code node deploy}), and what a resume after {@code kill -9} of a relay sends again. Skipped unless
 * {@code -Dmacfleet.benchmarks=true}:
 * {@code ./mvnw -B -o -f control-plane.xml test -Dtest=PlacementBenchmark -Dmacfleet.benchmarks=true
 * [-Dmacfleet.benchmark.placementMiB=2048] [-Dmacfleet.benchmark.runs=3] [-Dmacfleet.benchmark.placementPacedMiB=512]
 * [-Dmacfleet.benchmark.placementRateMiB=24] [-Dmacfleet.benchmark.placementUnpaced=false]}. The paced part feeds the first Mac at a fixed rate, as a management
 * link slower than what the Macs can take would: on the shared 2-core machine the unpaced figures are bound by the CPU
 * the four simulated Macs share (each hashes every byte), which real Macs do not share.
 */
@EnabledIfSystemProperty(named = "macfleet.benchmarks", matches = "true")
class PlacementBenchmark {

    @TempDir
    Path directory;

    @Test
    void fourMacsAgainstOne() throws Exception {
        long size = Long.getLong("macfleet.benchmark.placementMiB", 2048) << 20;
        int runs = Integer.getInteger("macfleet.benchmark.runs", 3);
        try (SimulatedPlacement placement = SimulatedPlacement.start(directory, 4, "127.0.143.11")) {
            PlacedFile file = SimulatedPlacement.randomFile(directory, "0123456789ab-benchmark.gguf", size, 42);
            PlacementEngine engine = new PlacementEngine(placement.engineSettings(PlacementEngine.DEFAULT_CHUNK_BYTES));
            List<RuntimeCluster.Machine> one = placement.machines.subList(0, 1);
            List<Double> toOne = new ArrayList<>();
            List<Double> toFour = new ArrayList<>();
            List<Double> sftpToOne = new ArrayList<>();
            long fromControlHost = 0;
            // -Dmacfleet.benchmark.placementUnpaced=false: only the paced part (the unpaced one measures this host's shared disk).
            boolean unpaced = Boolean.parseBoolean(System.getProperty("macfleet.benchmark.placementUnpaced", "true"));
            for (int run = 0; run < (unpaced ? runs : 0); run++) {
                removeEverywhere(placement, file);
                toOne.add(timed(() -> place(placement, engine, one, file)));
                removeEverywhere(placement, file);
                PlacementReport[] four = new PlacementReport[1];
                java.util.Map<String, Long> finished = new java.util.concurrent.ConcurrentHashMap<>();
                long fourStarted = System.nanoTime();
                toFour.add(timed(() -> four[0] = place(placement, engine, placement.machines, file, new NodeDeployer.Listener() {
                    @Override
                    public void step(String machine, String what) {
                        if (what.startsWith("verified")) {
                            finished.put(machine, System.nanoTime() - fourStarted);
                        }
                    }
                })));
                System.out.printf(Locale.ROOT, "  4 Macs verified at (s from the start): %s%n", finished.entrySet().stream().sorted(java.util.Map.Entry.comparingByKey())
                        .map(entry -> entry.getKey() + " " + String.format(Locale.ROOT, "%.1f", entry.getValue() / 1e9)).toList());
                assertThat(four[0].succeeded()).as(four[0].toString()).isTrue();
                fromControlHost = four[0].bytesFromControlHost();
                removeEverywhere(placement, file);
                sftpToOne.add(timed(() -> sftp(placement, one.getFirst(), file)));
                System.out.printf(Locale.ROOT, "run %d: placement to 1 Mac %.1f s, to 4 Macs %.1f s, striped SFTP copy to 1 Mac %.1f s%n",
                        run + 1, toOne.getLast(), toFour.getLast(), sftpToOne.getLast());
            }
            if (unpaced) {
            double one1 = median(toOne);
            double four4 = median(toFour);
            double sftp1 = median(sftpToOne);
            System.out.printf(Locale.ROOT, "placement of %d MiB, %d runs: bytes from the control host for 4 Macs %d = %.4fx the file;"
                            + " median wall to 4 Macs %.1f s, to 1 Mac %.1f s (ratio %.2f), striped SFTP to 1 Mac %.1f s (ratio %.2f)%n",
                    size >> 20, runs, fromControlHost, fromControlHost / (double) size, four4, one1, four4 / one1, sftp1, four4 / sftp1);

            // Resume: kill -9 of studio-02's relay a quarter of the way in.
            removeEverywhere(placement, file);
            SimulatedMac victim = placement.simulation.fleet.machine("studio-02");
            AtomicBoolean killed = new AtomicBoolean();
            PlacementReport resumed;
            try (SshRun run = placement.openRun()) {
                resumed = engine.place(run, "llm-a", placement.machines, List.of(file), new NodeDeployer.Listener() {
                    @Override
                    public void copying(String machine, String name, long done, long total) {
                        if (machine.equals("studio-02") && done >= total / 4 && !killed.getAndSet(true)) {
                            victim.launchd().crash(PlacementEngine.LABEL);
                        }
                    }
                });
            }
            assertThat(resumed.succeeded()).as(resumed.toString()).isTrue();
            System.out.printf(Locale.ROOT, "resume after kill -9 of studio-02's relay at 25%%: %d rounds, bytes from the control host %.4fx the file,"
                            + " received again (chunk %d bytes): %s%n", resumed.rounds(), resumed.bytesFromControlHost() / (double) size,
                    PlacementEngine.DEFAULT_CHUNK_BYTES, resumed.machines().stream().map(m -> m.machine() + " " + m.bytesResent()).toList());
            removeEverywhere(placement, file);
            }

            // With the feed paced as a management link slower than the Macs would pace it (the CPU of the shared machine
            // then no longer decides): 4 Macs against 1.
            long paced = Long.getLong("macfleet.benchmark.placementPacedMiB", 512) << 20;
            long rate = Long.getLong("macfleet.benchmark.placementRateMiB", 24) << 20;
            PlacedFile small = SimulatedPlacement.randomFile(directory, "0123456789ab-paced.gguf", paced, 43);
            PlacementEngine pacedEngine = new PlacementEngine(placement.engineSettings(PlacementEngine.DEFAULT_CHUNK_BYTES).withFeedBytesPerSecond(rate));
            List<Double> pacedOne = new ArrayList<>();
            List<Double> pacedFour = new ArrayList<>();
            for (int run = 0; run < runs; run++) {
                removeEverywhere(placement, small);
                pacedOne.add(timed(() -> place(placement, pacedEngine, one, small)));
                removeEverywhere(placement, small);
                java.util.Map<String, Long> verified = new java.util.concurrent.ConcurrentHashMap<>();
                long started = System.nanoTime();
                pacedFour.add(timed(() -> place(placement, pacedEngine, placement.machines, small, new NodeDeployer.Listener() {
                    @Override
                    public void step(String machine, String what) {
                        if (what.startsWith("verified")) {
                            verified.put(machine, System.nanoTime() - started);
                        }
                    }
                })));
                // Pipelined: every Mac verifies within about a second of the others (store-and-forward would be a copy apart).
                System.out.printf(Locale.ROOT, "paced run %d: to 1 Mac %.1f s, to 4 Macs %.1f s; 4 Macs verified at (s): %s%n", run + 1,
                        pacedOne.getLast(), pacedFour.getLast(), verified.entrySet().stream().sorted(java.util.Map.Entry.comparingByKey())
                                .map(entry -> entry.getKey() + " " + String.format(Locale.ROOT, "%.1f", entry.getValue() / 1e9)).toList());
            }
            System.out.printf(Locale.ROOT, "paced at %d MiB/s, %d MiB, %d runs: median wall to 4 Macs %.1f s, to 1 Mac %.1f s (ratio %.2f)%n",
                    rate >> 20, paced >> 20, runs, median(pacedFour), median(pacedOne), median(pacedFour) / median(pacedOne));
            removeEverywhere(placement, small);
        }
    }

    private static PlacementReport place(SimulatedPlacement placement, PlacementEngine engine, List<RuntimeCluster.Machine> machines, PlacedFile file) {
        return place(placement, engine, machines, file, NodeDeployer.Listener.NONE);
    }

    private static PlacementReport place(SimulatedPlacement placement, PlacementEngine engine, List<RuntimeCluster.Machine> machines, PlacedFile file,
                                         NodeDeployer.Listener listener) {
        try (SshRun run = placement.openRun()) {
            PlacementReport report = engine.place(run, "llm-a", machines, List.of(file), listener);
            assertThat(report.succeeded()).as(report.toString()).isTrue();
            return report;
        }
    }

    /** node deploy's copy of today: striped SFTP, verified by the Mac's shasum. */
    private static void sftp(SimulatedPlacement placement, RuntimeCluster.Machine machine, PlacedFile file) {
        try (SshRun run = placement.openRun()) {
            var result = run.onFleet(List.of(machine.ssh()), session -> {
                session.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", machine.ssh().user(), "-m", "755", NodeLayout.MODEL_DIRECTORY));
                return session.withSftpStripes("copy", FileCopy.connectionsFor(file.size()),
                        channels -> new FileCopy(machine.name(), channels, NodeDeployer.shell(session)).copy(file.localFile(), file.remotePath(),
                                (done, total) -> {
                                }));
            }).getFirst();
            assertThat(result.succeeded()).as(result.describe()).isTrue();
        }
    }

    private static void removeEverywhere(SimulatedPlacement placement, PlacedFile file) throws Exception {
        for (RuntimeCluster.Machine machine : placement.machines) {
            Path placed = placement.onMac(machine.name(), file);
            Files.deleteIfExists(placed);
            Files.deleteIfExists(placed.resolveSibling(placed.getFileName() + ".partial"));
        }
    }

    interface Work {
        void run() throws Exception;
    }

    private static double timed(Work work) throws Exception {
        long started = System.nanoTime();
        work.run();
        return (System.nanoTime() - started) / 1e9;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted(Comparator.naturalOrder()).toList();
        return sorted.get(sorted.size() / 2);
    }
}
