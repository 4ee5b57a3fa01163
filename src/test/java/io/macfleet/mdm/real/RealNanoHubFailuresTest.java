package io.macfleet.mdm.real;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.macfleet.mdm.Change;
import io.macfleet.mdm.DeclarativeOsUpdates;
import io.macfleet.mdm.EnqueueResult;
import io.macfleet.mdm.EnrollmentState;
import io.macfleet.mdm.MdmCommand;
import io.macfleet.mdm.MdmServerException;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.mdm.SoftwareUpdateStatus;
import io.macfleet.mdm.nanohub.NanoHubClient;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.mdm.SimulatedMdmDevice;
import io.macfleet.simulator.mdm.StandaloneHost;
import io.macfleet.simulator.mdm.UpdateTimings;
import io.macfleet.inventory.Machine;
import io.macfleet.osupdate.MdmUpdateMethod;
import io.macfleet.osupdate.UpdateProgress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The NanoHUB client's error paths, each reproduced against the real NanoHUB with file storage and with MySQL
 * storage (MariaDB): a Mac that has not reported yet, a command queued whose push failed (there is no APNs here, as
 * with an expired push certificate), an install-state older than many reports, an enrollment that disappears, and a
 * server that stops answering.
 */
class RealNanoHubFailuresTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = "Mac15,14";
    private static final UpdateTimings TIMINGS = new UpdateTimings(Duration.ofMillis(50), Duration.ofMillis(200), Duration.ofMillis(200), Duration.ofMillis(400));
    private static MariaDbServer mariaDb;
    private static Path directory;
    private static int databases;

    private RealNanoHub hub;
    private NanoHubClient client;

    @BeforeAll
    static void startMariaDb() throws Exception {
        directory = Files.createTempDirectory("real-nanohub-failures");
        RealNanoHub.binary();
        mariaDb = MariaDbServer.start();
    }

    @AfterAll
    static void stopMariaDb() throws Exception {
        if (mariaDb != null) {
            mariaDb.close();
        }
        if (directory != null) {
            try (var files = Files.walk(directory)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.close();
        }
        if (hub != null) {
            hub.close();
        }
    }

    private void start(String storage) throws Exception {
        Path here = directory.resolve(storage + "-" + (++databases));
        String dsn = storage.equals("mysql") ? mariaDb.nanoHubDatabase(RealNanoHub.source(), "nanohub" + databases) : null;
        hub = RealNanoHub.start(here, storage, dsn, TIMINGS);
        client = hub.client(Duration.ofSeconds(10));
    }

    private StandaloneHost enroll(String id) {
        StandaloneHost host = new StandaloneHost(MODEL, MacosRelease.of("26.1"), Duration.ofMillis(200));
        hub.devices.enroll(id, host);
        await("the first status report of " + id, () -> client.enrollment(id).declarativeStatusSeen());
        return host;
    }

    @ParameterizedTest
    @ValueSource(strings = {"file", "mysql"})
    void aMacThatHasNotReportedYetIsNoReportNotAnError(String storage) throws Exception {
        start(storage);
        String id = "7D000000-0000-4000-8000-0000000000B1";
        // What the real server answers: file storage 500 "key not found", MySQL storage 500 "sql: no rows in result set".
        HttpResponse<String> raw = rawGet("/api/v1/ddm/status-report/" + id + "?index=0");
        assertThat(raw.statusCode()).isEqualTo(500);
        assertThat(raw.body()).contains(storage.equals("mysql") ? "sql: no rows in result set" : "key not found");

        EnrollmentState state = client.enrollment(id);
        assertThat(state.declarativeStatusSeen()).isFalse();
        assertThat(client.statusReport(id, 0)).isEmpty();
        SoftwareUpdateStatus status = client.softwareUpdateStatus(id);
        assertThat(status.installState()).isEmpty();
        assertThat(status.osVersion()).isEmpty();
        if (storage.equals("file")) {
            // NanoMDM's and KMFDDM's MySQL storage write with MySQL 8's row alias (INSERT … AS new ON DUPLICATE KEY
            // UPDATE), which Debian's MariaDB rejects (Error 1064): no Mac can enroll there, so the rest is file only.
            enroll(id);
            assertThat(client.statusReport(id, 0)).isPresent();
            assertThat(client.statusReport(id, 50)).as("past the last report").isEmpty();
            assertThat(rawGet("/api/v1/ddm/status-report/" + id + "?index=50").body()).contains("index out of range");
        }
    }

    @Test
    void mariaDbCannotHoldNanoHubEnrollments() throws Exception {
        // Kept as a test so that the day Debian's server accepts NanoHUB's SQL, this fails and the MySQL campaign can run.
        start("mysql");
        assertThatThrownBy(() -> enroll("7D000000-0000-4000-8000-0000000000B0")).hasMessageContaining("Authenticate").hasMessageContaining("500");
        assertThat(hub.server.logTail()).contains("Error 1064").contains("AS new");
    }

    private HttpResponse<String> rawGet(String path) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(HttpRequest.newBuilder(hub.server.url().resolve(path))
                    .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(("nanohub:" + RealNanoHub.API_KEY).getBytes(StandardCharsets.UTF_8)))
                    .build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"file"})
    void aCommandWhosePushFailedIsQueuedAndNeverQueuedAgain(String storage) throws Exception {
        start(storage);
        String id = "7D000000-0000-4000-8000-0000000000B2";
        enroll(id);

        // NanoMDM answers 500 with the push error, although the command is queued.
        EnqueueResult result = client.enqueue(List.of(id), new MdmCommand.DeviceInformation("cmd-push-failed-1", List.of("OSVersion")));
        assertThat(result.enrollments()).singleElement().satisfies(one -> {
            assertThat(one.queued()).isTrue();
            assertThat(one.describe()).startsWith("queued, push failed: ");
        });
        await("the Mac gets the queued command at its next check-in",
                () -> hub.devices.device(id).answeredCommands().stream().anyMatch(c -> c.commandUuid().equals("cmd-push-failed-1")));

        // KMFDDM: the assignment is stored and its DeclarativeManagement command queued, then the push fails (500).
        OsUpdateTarget target = new OsUpdateTarget("26.2", Optional.of("25C56"), LocalDateTime.now().plusHours(1));
        List<Change> first = new DeclarativeOsUpdates(client).enforce("llm-a", target, List.of(id));
        assertThat(first.getLast().kind()).isEqualTo(Change.Kind.CHANGED_PUSH_FAILED);
        assertThat(first.getLast().pushNote()).hasValueSatisfying(note -> assertThat(note).startsWith("queued, push failed: ").contains("push"));
        await("the Mac syncs the four declarations", () -> hub.devices.deliveries(id).size() == 4);
        long syncCommands = syncCommands(id);

        List<Change> again = new DeclarativeOsUpdates(client).enforce("llm-a", target, List.of(id));
        assertThat(again).containsOnly(Change.UNCHANGED);
        Thread.sleep(500);
        assertThat(syncCommands(id)).as("no second sync queued").isEqualTo(syncCommands);
        assertThat(hub.devices.deliveries(id)).hasSize(4).doesNotHaveDuplicates();
    }

    private long syncCommands(String id) {
        return hub.devices.device(id).answeredCommands().stream().filter(c -> c.requestType().equals("DeclarativeManagement")).count();
    }

    @ParameterizedTest
    @ValueSource(strings = {"file"})
    void anInstallStateOlderThanManyReportsIsStillRead(String storage) throws Exception {
        start(storage);
        String id = "7D000000-0000-4000-8000-0000000000B3";
        enroll(id);
        // The deadline is an hour away: the Mac downloads, reports "prepared" once and then stays quiet about it.
        new DeclarativeOsUpdates(client).enforce("llm-a", new OsUpdateTarget("26.2", Optional.of("25C56"), LocalDateTime.now().plusHours(1)), List.of(id));
        await("prepared", () -> hub.devices.device(id).phase() == SimulatedMdmDevice.Phase.PREPARED);
        await("prepared reported", () -> client.softwareUpdateStatus(id).installState().equals(Optional.of(SoftwareUpdateStatus.InstallState.PREPARED)));
        for (int i = 0; i < 24; i++) {
            ObjectNode report = JSON.createObjectNode();
            report.putObject("StatusItems").putObject("device").putObject("power").put("battery-health", "normal-" + i);
            report.putArray("Errors");
            hub.devices.report(id, report);
        }
        assertThat(client.statusReport(id, 20)).as("more than 16 reports newer than the install-state").isPresent();
        SoftwareUpdateStatus status = client.softwareUpdateStatus(id);
        assertThat(status.installState()).contains(SoftwareUpdateStatus.InstallState.PREPARED);
        assertThat(status.pendingVersion()).hasValueSatisfying(pending -> assertThat(pending.buildVersion()).isEqualTo("25C56"));
        assertThat(status.osVersion()).contains("26.1");
    }

    @Test
    void anEnrollmentThatDisappears() throws Exception {
        start("file");
        String id = "7D000000-0000-4000-8000-0000000000B4";
        enroll(id);
        MdmUpdateMethod method = new MdmUpdateMethod(client, null, null);
        Machine machine = new Machine("studio-09", "127.0.0.1", null, null, null, null, null, "llm-a", List.of(), id, null, java.util.Map.of());
        OsUpdateTarget target = new OsUpdateTarget("26.2", Optional.of("25C56"), LocalDateTime.now().plusHours(1));
        assertThat(method.progress(machine, target).phase()).isEqualTo(UpdateProgress.Phase.WAITING);

        // The server's storage is gone (a reset, a new server on the old URL): the same enrollment ID is unknown there.
        hub.close();
        client.close();
        hub = null;
        start("file");
        UpdateProgress progress = method(client).progress(machine, target);
        assertThat(progress.phase()).isEqualTo(UpdateProgress.Phase.UNKNOWN);
        assertThat(progress.detail()).contains("no status report from enrollment " + id).contains("not enrolled");
        assertThat(client.enrollment(id).declarativeStatusSeen()).isFalse();
        // A raw command to it is refused outright: NanoMDM has no push data for an unknown ID, and says so.
        EnqueueResult result = client.enqueue(List.of(id), new MdmCommand.DeviceInformation("cmd-to-nobody", List.of("OSVersion")));
        assertThat(result.enrollments()).singleElement().satisfies(one -> assertThat(one.describe()).contains("push data missing"));
    }

    private static MdmUpdateMethod method(NanoHubClient client) {
        return new MdmUpdateMethod(client, null, null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"file"})
    void aServerThatStopsAnsweringCostsOneDeadlinePerRequest(String storage) throws Exception {
        start(storage);
        String id = "7D000000-0000-4000-8000-0000000000B5";
        enroll(id);
        try (NanoHubClient impatient = hub.client(Duration.ofMillis(1_500))) {
            signal("STOP");
            try {
                long started = System.nanoTime();
                assertThatThrownBy(() -> impatient.softwareUpdateStatus(id)).isInstanceOfSatisfying(MdmServerException.class, e -> {
                    assertThat(e.problem()).isEqualTo(MdmServerException.Problem.TIMEOUT);
                    assertThat(e.getMessage()).contains("nanohub http://127.0.0.1:").contains("GET /api/v1/ddm/status-report/").contains("1500 ms");
                });
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            } finally {
                signal("CONT");
            }
            assertThat(impatient.enrollment(id).declarativeStatusSeen()).isTrue();
        }
    }

    private void signal(String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(hub.server.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }

    private void await(String what, BooleanSupplier condition) {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < end) {
            if (condition.getAsBoolean()) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("timed out waiting for " + what + "; device errors " + hub.devices.lastErrors() + "\n" + hub.server.logTail());
    }
}
