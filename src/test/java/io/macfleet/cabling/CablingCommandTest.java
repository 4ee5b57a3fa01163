package io.macfleet.cabling;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.cli.PlainCommandLine;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class CablingCommandTest {

    private record Run(int exitCode, String out, String err) {
    }

    private static Run run(String... arguments) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        // Configured as the macfleet command line is: failures (CommandFailure) are reported by its one handler.
        CommandLine commandLine = PlainCommandLine.configure(new CommandLine(new CablingCommand()));
        commandLine.setOut(new PrintWriter(out));
        commandLine.setErr(new PrintWriter(err));
        int exitCode = commandLine.execute(arguments);
        return new Run(exitCode, out.toString(), err.toString());
    }

    @Test
    void checkOfAGoodMeshExitsZero(@TempDir Path captures) throws Exception {
        ClusterFixture.fullMesh("studio-01", "studio-02", "studio-03", "studio-04").writeCaptures(captures);

        Run run = run("check", "--from", captures.toString(), "--cluster", "llm-a", "--target-version", "26.2");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("Cabling of cluster llm-a: 4 machines, 6 cables seen from both sides")
                .contains("No findings.")
                .contains("Verdict: ready for tensor parallelism over RDMA (JACCL) on all 4 machines");
    }

    @Test
    void checkWithAFaultExitsOneAndPrintsTheFix(@TempDir Path captures) throws Exception {
        ClusterFixture.fullMesh("studio-01", "studio-02").rdma("studio-02", false).writeCaptures(captures);
        Path svg = captures.resolveSibling(captures.getFileName() + ".svg");

        Run run = run("check", "--from", captures.toString(), "--json", "--svg", svg.toString());

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.out()).contains("\"passed\" : false").contains("\"code\" : \"rdma-disabled\"").contains("rdma_ctl enable");
        assertThat(Files.readString(svg)).startsWith("<svg");
    }

    @Test
    void unreadableCapturesExitTwoNamingTheFile(@TempDir Path captures) throws Exception {
        Files.createDirectories(captures.resolve("studio-01"));

        Run run = run("check", "--from", captures.toString());

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains(captures.resolve("studio-01").resolve("SPThunderboltDataType.json") + ": missing (required for the cabling check)");
    }

    @Test
    void badLinkSyntaxIsAUsageError(@TempDir Path captures) throws Exception {
        ClusterFixture.fullMesh("studio-01", "studio-02").writeCaptures(captures);

        Run run = run("check", "--from", captures.toString(), "--link", "studio-01:9<->studio-02:2");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--link 'studio-01:9<->studio-02:2': 'studio-01:9' is not MACHINE:PORT with a port from 1 to 6");
    }

    @Test
    void configWritesAJacclHostfileAndRefusesABrokenCluster(@TempDir Path captures) throws Exception {
        ClusterFixture cluster = ClusterFixture.fullMesh("studio-01", "studio-02");
        cluster.writeCaptures(captures.resolve("good"));
        cluster.bridgeActive("studio-01").writeCaptures(captures.resolve("bad"));

        Run good = run("config", "--from", captures.resolve("good").toString(), "--format", "mlx-jaccl", "--env", "MLX_METAL_FAST_SYNCH=1");
        Run bad = run("config", "--from", captures.resolve("bad").toString(), "--format", "mlx-jaccl");
        Run unknown = run("config", "--from", captures.resolve("good").toString(), "--format", "nccl");

        assertThat(good.exitCode()).as(good.err()).isZero();
        assertThat(good.out()).contains("\"backend\" : \"jaccl\"").contains("\"rdma_en3\"").contains("MLX_METAL_FAST_SYNCH=1");
        assertThat(bad.exitCode()).isEqualTo(1);
        assertThat(bad.err()).contains("fails the cabling check").contains("Thunderbolt Bridge");
        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.err()).contains("unknown --format 'nccl'; expected mlx-jaccl, mlx-ring or macfleet");
    }

    /**
     * ml-explore/mlx python/mlx/_distributed_utils/launch.py:374-375 (launch_jaccl): "Rank 0 should have an IP reachable
     * from all other ranks". Without rank 0's address the hostfile used to carry "ips": [] for rank 0.
     */
    @Test
    void configRefusesAJacclHostfileWithoutRankZerosAddress(@TempDir Path captures) throws Exception {
        ClusterFixture.fullMesh("studio-01", "studio-02").writeCaptures(captures);
        Files.delete(captures.resolve("studio-01").resolve(CaptureDirectory.ADDRESS));

        Run run = run("config", "--from", captures.toString(), "--format", "mlx-jaccl", "--force");
        Files.delete(captures.resolve("studio-02").resolve(CaptureDirectory.ADDRESS));
        Files.writeString(captures.resolve("studio-01").resolve(CaptureDirectory.ADDRESS), "192.168.50.11\n");
        Run rankZeroKnown = run("config", "--from", captures.toString(), "--format", "mlx-jaccl");

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("rank 0 (studio-01)").contains("no known management address")
                .contains("studio-01/" + CaptureDirectory.ADDRESS);
        assertThat(rankZeroKnown.exitCode()).as(rankZeroKnown.err()).isZero();
        assertThat(rankZeroKnown.out()).contains("\"192.168.50.11\"");
    }

    @Test
    void planPrintsACablingSheetAndRejectsSevenMachines() {
        Run plan = run("plan", "--machines", "a,b,c,d", "--cluster", "llm-a");
        Run tooMany = run("plan", "--machines", "a,b,c,d,e,f,g");

        assertThat(plan.exitCode()).isZero();
        assertThat(plan.out()).contains("llm-a: 4 machines, full mesh, 6 Thunderbolt 5 cables");
        assertThat(tooMany.exitCode()).isEqualTo(2);
        assertThat(tooMany.err()).contains("a full RDMA mesh has at most 6 machines");
    }

    @Test
    void ringConfigRefusesAFailingClusterUnlessForcedAndSaysWhichAddressesItAssumes(@TempDir Path captures) throws Exception {
        ClusterFixture ring = ClusterFixture.macStudios("a", "b", "c").cable("a", 2, "b", 2).cable("b", 3, "c", 3).cable("c", 4, "a", 4);
        ring.writeCaptures(captures.resolve("good"));
        ring.bridgeActive("b").writeCaptures(captures.resolve("bad"));

        Run good = run("config", "--from", captures.resolve("good").toString(), "--format", "mlx-ring");
        Run bad = run("config", "--from", captures.resolve("bad").toString(), "--format", "mlx-ring");
        Run forced = run("config", "--from", captures.resolve("bad").toString(), "--format", "mlx-ring", "--force");

        assertThat(good.exitCode()).as(good.err()).isZero();
        assertThat(good.out()).contains("\"backend\" : \"ring\"").doesNotContain("assumes");
        assertThat(good.err()).contains("assumes these point-to-point addresses on the Thunderbolt links (one /30 per cable")
                .contains("Thunderbolt Bridge off").containsPattern("a en\\d 192\\.168\\.0\\.\\d+  <->  b en\\d 192\\.168\\.0\\.\\d+");
        assertThat(bad.exitCode()).isEqualTo(1);
        assertThat(bad.out()).isEmpty();
        assertThat(bad.err()).contains("fails the cabling check for the ring backend").contains("Thunderbolt Bridge").contains("--force");
        assertThat(forced.exitCode()).as(forced.err()).isZero();
        assertThat(forced.out()).contains("\"backend\" : \"ring\"");
    }

    @Test
    void planSvgDrawsPlannedCablesAsPlannedNotAsAgreeing(@TempDir Path directory) throws Exception {
        Path svg = directory.resolve("plan.svg");

        Run plan = run("plan", "--machines", "a,b,c,d", "--cluster", "llm-a", "--svg", svg.toString());

        assertThat(plan.exitCode()).as(plan.err()).isZero();
        String drawn = Files.readString(svg);
        assertThat(drawn.split("data-state=\"planned\"", -1)).hasSize(7);
        assertThat(drawn).doesNotContain("data-state=\"ok\"").doesNotContain("both sides agree").contains("planned, not yet observed");
    }
}
