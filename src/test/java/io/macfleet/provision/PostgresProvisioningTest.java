package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.database.PostgresServer;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Runs, step states, leases and confirmations (migration V4_1) on a real PostgreSQL server. */
class PostgresProvisioningTest {

    @Test
    void runWaitConfirmAndRerunOnPostgresql() throws Exception {
        try (PostgresServer server = PostgresServer.start();
             ProvisioningFixture fixture = ProvisioningFixture.start(Files.createTempDirectory("macfleet-provision-pg"), 2, "127.0.0.141", server.url())) {
            RunOutcome waiting = fixture.service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(), "rdma-enable",
                    null, null, false, null), "gina", ProvisioningListener.SILENT);
            assertThat(waiting.status()).isEqualTo("waiting-for-operator");
            assertThat(waiting.waiting()).hasSize(2);
            // The walkthrough is stored with the waiting step, and each machine's newest run says where it stands.
            assertThat(fixture.service.run(waiting.runId()).orElseThrow().steps()).allSatisfy(step ->
                    assertThat(step.operatorRequest().instructions()).hasSize(8));
            assertThat(fixture.service.latestPerMachine()).containsOnlyKeys("studio-01", "studio-02")
                    .allSatisfy((machine, progress) -> assertThat(progress.state()).isEqualTo("waiting-for-operator"));

            fixture.enableRdmaInRecovery("studio-01");
            ProvisioningService.Confirmation confirmed = fixture.service.confirmOperatorStep(waiting.runId(), "studio-01", "rdma-enabled", "gina");
            assertThat(confirmed.verified()).isTrue();
            fixture.enableRdmaInRecovery("studio-02");
            // The confirmation resumes the run in the background (verification, then the Mac's facts gathered again);
            // a `provision` while that holds the run's lease is refused as busy, so the operator's second call comes after.
            long leaseDeadline = System.nanoTime() + 30_000_000_000L;
            while (fixture.service.run(waiting.runId()).orElseThrow().run().leaseOwner() != null && System.nanoTime() < leaseDeadline) {
                Thread.sleep(50);
            }
            RunOutcome resumed = fixture.service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(), "rdma-enable",
                    null, null, false, null), "gina", ProvisioningListener.SILENT);
            // Unless the confirmation already resumed it in the background, this call resumes the same run.
            assertThat(resumed.runId()).isIn(waiting.runId(), waiting.runId() + 1);
            long runId = waiting.runId();
            awaitSucceeded(fixture, runId);
            RunView.Detail detail = fixture.service.run(runId).orElseThrow();
            assertThat(detail.machineStates()).containsEntry("studio-01", "ready").containsEntry("studio-02", "ready");
            assertThat(detail.confirmations()).singleElement().satisfies(c -> assertThat(c.actor()).isEqualTo("gina"));
            assertThat(detail.run().leaseOwner()).isNull();
            assertThat(fixture.service.runs(10)).extracting(RunView.Run::id).contains(runId);
            assertThat(fixture.service.latestPerMachine().get("studio-01").state()).isEqualTo("ready");
            assertThat(fixture.service.run(runId).orElseThrow().steps()).allSatisfy(step -> assertThat(step.operatorRequest()).isNull());
            assertThat(fixture.service.runsOf("studio-02", 5)).extracting(RunView.Run::id).contains(runId);
        }
    }

    private static void awaitSucceeded(ProvisioningFixture fixture, long runId) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!fixture.service.run(runId).orElseThrow().run().status().equals("succeeded") && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(fixture.service.run(runId).orElseThrow().run().status()).isEqualTo("succeeded");
    }
}
