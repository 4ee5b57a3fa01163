package io.macfleet.simulator.mdm;

import static io.macfleet.simulator.mdm.MdmTestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.macfleet.mdm.Change;
import io.macfleet.mdm.Declaration;
import io.macfleet.mdm.DeclarationStatus;
import io.macfleet.mdm.DeclarativeOsUpdates;
import io.macfleet.mdm.EnqueueResult;
import io.macfleet.mdm.MdmCommand;
import io.macfleet.mdm.MdmServerException;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.mdm.SoftwareUpdateStatus;
import io.macfleet.mdm.SoftwareUpdateStatus.InstallState;
import io.macfleet.mdm.nanohub.NanoHubClient;
import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.MacosRelease;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NanoHUB client against the simulated NanoHUB, and the simulated Macs' MDM clients: sync, judgement of
 * declarations, status reports, the update walk and each fault.
 */
class SimulatedNanoHubTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = "Mac15,14";
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path state;

    private SimulatedNanoHub hub;
    private NanoHubClient client;
    private DeclarativeOsUpdates updates;
    private final List<StandaloneHost> hosts = new ArrayList<>();
    private final List<String> ids = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        hub = new SimulatedNanoHub("127.0.0.1", 0, "hub-key", UpdateTimings.forTests());
        Path keyFile = state.resolve("nanohub.key");
        Files.writeString(keyFile, "hub-key\n");
        client = new NanoHubClient(hub.url(), SecretReference.of("file:" + keyFile), Duration.ofSeconds(3));
        updates = new DeclarativeOsUpdates(client);
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    private void enrollCluster(int macs, String version) {
        for (int i = 1; i <= macs; i++) {
            StandaloneHost host = new StandaloneHost(MODEL, MacosRelease.of(version), Duration.ofMillis(100));
            String id = "5A0D1E2C-0000-4000-8000-00000000000" + i;
            hub.enroll(id, host);
            hosts.add(host);
            ids.add(id);
        }
    }

    private static OsUpdateTarget target(String version, String build, long deadlineInMillis) {
        return new OsUpdateTarget(version, Optional.ofNullable(build), LocalDateTime.now().plus(Duration.ofMillis(deadlineInMillis)));
    }

    private SoftwareUpdateStatus status(String id) {
        return client.softwareUpdateStatus(id);
    }

    @Test
    void aFourMacClusterWalksDownloadingPreparedInstallingAndEndsOnTheSameVersionAndBuild() {
        enrollCluster(4, "26.1");
        await("first status reports", WAIT, () -> ids.stream().allMatch(id -> status(id).osVersion().isPresent()));
        assertThat(status(ids.getFirst()).osVersion()).contains("26.1");

        // Whole seconds: the deadline is 1-2 s away, after the 150 ms download, so every Mac waits prepared for it.
        List<Change> changes = updates.enforce("studio-a", target("26.2", "25C56", 2_000), ids);
        assertThat(changes).containsOnly(Change.CHANGED);

        await("all four on 26.2 (25C56)", WAIT, () -> ids.stream().map(this::status).allMatch(status ->
                status.buildVersion().equals(Optional.of("25C56")) && status.installState().equals(Optional.of(InstallState.NONE))));
        for (int i = 0; i < ids.size(); i++) {
            // What each Mac reported, oldest first, from the raw reports the server kept.
            List<String> reported = new ArrayList<>();
            for (int index = 0; ; index++) {
                var report = client.statusReport(ids.get(i), index);
                if (report.isEmpty()) {
                    break;
                }
                var state = report.get().body().path("StatusItems").path("softwareupdate").path("install-state");
                if (state.isTextual()) {
                    reported.addFirst(state.asText());
                }
            }
            // The subscription arrives with the enforcement, so the first install-state a Mac reports is already downloading.
            assertThat(reported).as("install-state reported by " + ids.get(i)).containsExactly("downloading", "prepared", "installing", "none");
            assertThat(hosts.get(i).release().version()).isEqualTo("26.2");
            SoftwareUpdateStatus done = status(ids.get(i));
            assertThat(done.osVersion()).contains("26.2");
            assertThat(done.pendingVersion()).contains(new SoftwareUpdateStatus.PendingVersion("", ""));
            assertThat(done.failureReason().orElseThrow().count()).isZero();
        }
        List<DeclarationStatus> declarations = client.declarationStatus(ids);
        assertThat(declarations).hasSize(16).allSatisfy(status -> {
            assertThat(status.applied()).as(status.identifier()).isTrue();
            assertThat(status.current()).isTrue();
        });
    }

    @Test
    void enforcingTheSameTargetAgainChangesNothingAndNoDeviceGetsARevisionTwice() {
        enrollCluster(2, "26.1");
        OsUpdateTarget target = target("26.2", "25C56", 60_000);
        updates.enforce("studio-b", target, ids);
        await("declarations applied", WAIT, () -> client.declarationStatus(ids).stream().filter(DeclarationStatus::applied).count() == 8);

        assertThat(updates.enforce("studio-b", target, ids)).containsOnly(Change.UNCHANGED);
        MdmTestSupport.sleep(100);
        assertThat(hub.declarationChanges()).hasSize(4);
        assertThat(hub.declarationWrites()).hasSize(8);
        for (String id : ids) {
            assertThat(hub.deliveries(id)).hasSize(4).doesNotHaveDuplicates();
        }

        // A new target replaces the enforcement (same identifier, new token): delivered once more, nothing else.
        updates.enforce("studio-b", target("26.3", null, 60_000), ids);
        await("new enforcement delivered", WAIT, () -> ids.stream().allMatch(id -> hub.deliveries(id).size() == 5));
        MdmTestSupport.sleep(100);
        assertThat(hub.deliveries(ids.getFirst())).filteredOn(d -> d.startsWith("io.macfleet.studio-b.softwareupdate.enforcement@")).hasSize(2);
    }

    @Test
    void aConfigurationNoActivationReferencesStaysInactiveWithTheRealReason() {
        enrollCluster(1, "26.1");
        ObjectNode payload = JSON.createObjectNode();
        payload.putArray("StatusItems").addObject().put("Name", "softwareupdate.install-state");
        client.putDeclaration(new Declaration("com.apple.configuration.management.status-subscriptions", "com.example.subs", payload));
        client.addToSet("loose", "com.example.subs");
        client.assignSet(ids.getFirst(), "loose");

        await("status of com.example.subs", WAIT, () -> !client.declarationStatus(ids).isEmpty());
        DeclarationStatus status = client.declarationStatus(ids).getFirst();
        assertThat(status.active()).isFalse();
        assertThat(status.validity()).isEqualTo(DeclarationStatus.Validity.UNKNOWN);
        assertThat(status.reasons()).singleElement().satisfies(reason -> {
            assertThat(reason.code()).isEqualTo("Info.NotReferencedByActivation");
            assertThat(reason.description()).isEqualTo("Configuration “com.example.subs:" + status.serverToken() + "” is not referenced by an activation.");
        });
        // Not active, so not subscribed: no softwareupdate item is reported.
        assertThat(status(ids.getFirst()).installState()).isEmpty();
    }

    private DeclarationStatus judge(String type, ObjectNode payload) {
        String id = ids.getFirst();
        client.putDeclaration(new Declaration(type, "com.example.judged", payload));
        ObjectNode activation = JSON.createObjectNode();
        activation.putArray("StandardConfigurations").add("com.example.judged");
        client.putDeclaration(new Declaration("com.apple.activation.simple", "com.example.activation", activation));
        client.addToSet("judged", "com.example.judged");
        client.addToSet("judged", "com.example.activation");
        client.assignSet(id, "judged");
        await("a judgement of com.example.judged", WAIT, () -> client.declarationStatus(List.of(id)).stream()
                .anyMatch(s -> s.identifier().equals("com.example.judged") && s.current()));
        return client.declarationStatus(List.of(id)).stream().filter(s -> s.identifier().equals("com.example.judged")).findFirst().orElseThrow();
    }

    @Test
    void aMalformedEnforcementIsInvalidWithAppleReasonCodes() throws Exception {
        enrollCluster(1, "26.1");
        ObjectNode missingVersion = (ObjectNode) JSON.readTree("{\"TargetLocalDateTime\":\"2026-12-01T02:00:00\"}");
        DeclarationStatus missing = judge("com.apple.configuration.softwareupdate.enforcement.specific", missingVersion);
        assertThat(missing.validity()).isEqualTo(DeclarationStatus.Validity.INVALID);
        assertThat(missing.active()).isFalse();
        assertThat(missing.reasons()).singleElement().satisfies(reason -> {
            assertThat(reason.code()).isEqualTo("Error.ConfigurationCannotBeDeserialized");
            assertThat(reason.details()).contains("TargetOSVersion is missing");
        });

        ObjectNode badDate = (ObjectNode) JSON.readTree("{\"TargetOSVersion\":\"26.2\",\"TargetLocalDateTime\":\"2026-12-01 02:00\"}");
        assertThat(judge("com.apple.configuration.softwareupdate.enforcement.specific", badDate).reasons())
                .singleElement().extracting(r -> r.code()).isEqualTo("Error.ConfigurationIsInvalid");

        ObjectNode extraKey = (ObjectNode) JSON.readTree("{\"TargetOSVersion\":\"26.2\",\"TargetLocalDateTime\":\"2026-12-01T02:00:00\",\"ForceNow\":true}");
        DeclarationStatus unknownKeys = judge("com.apple.configuration.softwareupdate.enforcement.specific", extraKey);
        assertThat(unknownKeys.reasons()).singleElement().satisfies(reason -> {
            assertThat(reason.code()).isEqualTo("Error.UnknownPayloadKeys");
            assertThat(JSON.readTree(reason.details()).path("UnknownPayloadKeys").get(0).asText()).isEqualTo("ForceNow");
        });

        DeclarationStatus unknownType = judge("com.apple.configuration.softwareupdate.enforcement.everything", JSON.createObjectNode());
        assertThat(unknownType.reasons()).singleElement().satisfies(reason -> {
            assertThat(reason.code()).isEqualTo("Error.UnknownDeclarationType");
            assertThat(reason.description()).isEqualTo("Unknown Declaration Type");
            assertThat(JSON.readTree(reason.details()).path("UnknownDeclarationType").asText()).isEqualTo("com.apple.configuration.softwareupdate.enforcement.everything");
        });
    }

    @Test
    void aTargetNotOfferedForTheModelStaysActiveButIdle() {
        enrollCluster(1, "26.1");
        hub.catalog().withhold(MODEL, "26.2");
        updates.enforce("studio-c", target("26.2", null, 0), ids);
        await("declarations applied", WAIT, () -> client.declarationStatus(ids).stream().filter(DeclarationStatus::applied).count() == 4);
        MdmTestSupport.sleep(400);
        SoftwareUpdateStatus status = status(ids.getFirst());
        assertThat(status.installState()).contains(InstallState.NONE);
        assertThat(status.pendingVersion()).contains(new SoftwareUpdateStatus.PendingVersion("", ""));
        assertThat(status.osVersion()).contains("26.1");
        assertThat(hosts.getFirst().restarts()).isZero();
    }

    private SoftwareUpdateStatus awaitFailure() {
        await("install-state failed", WAIT, () -> status(ids.getFirst()).installState().equals(Optional.of(InstallState.FAILED)));
        return status(ids.getFirst());
    }

    @Test
    void withoutABootstrapTokenTheUpdateDownloadsButCannotBeAuthorized() {
        enrollCluster(1, "26.1");
        hosts.getFirst().setBootstrapTokenEscrowed(false);
        updates.enforce("studio-d", target("26.2", "25C56", 0), ids);
        SoftwareUpdateStatus failed = awaitFailure();
        assertThat(failed.failureReason().orElseThrow().count()).isEqualTo(1);
        assertThat(failed.failureReason().orElseThrow().reason()).contains(SimulatedMdmDevice.NO_BOOTSTRAP_TOKEN);
        assertThat(failed.failureReason().orElseThrow().timestamp()).isPresent();
        assertThat(failed.pendingVersion()).contains(new SoftwareUpdateStatus.PendingVersion("26.2", "25C56"));
        assertThat(failed.osVersion()).contains("26.1");
        assertThat(hosts.getFirst().restarts()).isZero();
    }

    @Test
    void notEnoughDiskFailsTheDownloadAtOnce() {
        enrollCluster(1, "26.1");
        hub.device(ids.getFirst()).faults().notEnoughDisk = true;
        updates.enforce("studio-e", target("26.2", "25C56", 0), ids);
        assertThat(awaitFailure().failureReason().orElseThrow().reason()).contains(SimulatedMdmDevice.NOT_ENOUGH_DISK);
        assertThat(hosts.getFirst().release().version()).isEqualTo("26.1");
    }

    @Test
    void aFailedDownloadIsReportedAfterTheDownloadPhase() {
        enrollCluster(1, "26.1");
        hub.device(ids.getFirst()).faults().downloadFails = true;
        updates.enforce("studio-f", target("26.2", "25C56", 0), ids);
        await("downloading", WAIT, () -> status(ids.getFirst()).installState().equals(Optional.of(InstallState.DOWNLOADING)));
        assertThat(awaitFailure().failureReason().orElseThrow().reason()).contains(SimulatedMdmDevice.DOWNLOAD_FAILED);
    }

    @Test
    void aMacOffAtTheDeadlineEnforcesAScaledHourAfterItStartsAgain() {
        enrollCluster(1, "26.1");
        StandaloneHost host = hosts.getFirst();
        // TargetLocalDateTime has whole seconds, so the deadline is 0.5-1.5 s away: enough to reach prepared first.
        updates.enforce("studio-g", target("26.2", "25C56", 1_500), ids);
        await("prepared", WAIT, () -> hub.device(ids.getFirst()).phase() == SimulatedMdmDevice.Phase.PREPARED);
        host.powerOff();
        MdmTestSupport.sleep(1_700); // the deadline passes while it is off
        assertThat(host.release().version()).isEqualTo("26.1");
        host.powerOn();
        long bootedAt = System.nanoTime();
        // enforceAfterRestart is 300 ms in tests: nothing installs before it, then it does.
        MdmTestSupport.sleep(150);
        assertThat(hub.device(ids.getFirst()).phase()).isEqualTo(SimulatedMdmDevice.Phase.PREPARED);
        await("on 26.2 after the missed deadline", WAIT, () -> host.release().version().equals("26.2") && host.poweredOn());
        assertThat((System.nanoTime() - bootedAt) / 1_000_000).isGreaterThanOrEqualTo(300);
    }

    @Test
    void aMacThatComesBackOnTheWrongBuildReportsThatBuild() {
        enrollCluster(1, "26.1");
        hub.device(ids.getFirst()).faults().wrongBuildAfterRestart = true;
        updates.enforce("studio-h", target("26.2", "25C56", 0), ids);
        await("back from the install restart", WAIT, () -> hosts.getFirst().restarts() == 1 && hosts.getFirst().poweredOn()
                && status(ids.getFirst()).buildVersion().equals(Optional.of("25C56a")));
        SoftwareUpdateStatus status = status(ids.getFirst());
        assertThat(status.osVersion()).contains("26.2");
        assertThat(status.buildVersion()).contains("25C56a").isNotEqualTo(Optional.of("25C56"));
    }

    @Test
    void rawCommandsReachTheDeviceAndAreCounted() {
        enrollCluster(2, "26.1");
        MdmCommand restart = MdmCommand.RestartDevice.now();
        EnqueueResult result = client.enqueue(List.of(ids.getFirst()), restart);
        assertThat(result.commandUuid()).isEqualTo(restart.commandUuid());
        assertThat(result.enrollments()).singleElement().satisfies(one -> assertThat(one.pushId()).isPresent());
        await("restart", WAIT, () -> hosts.getFirst().restarts() == 1);
        assertThat(hub.commands()).singleElement().isEqualTo(new SimulatedNanoHub.EnqueuedCommand(ids.getFirst(), restart.commandUuid(), "RestartDevice"));

        EnqueueResult partly = client.enqueue(List.of(ids.get(1), "NOT-ENROLLED"), MdmCommand.DeviceInformation.of("OSVersion"));
        assertThat(partly.enrollments()).filteredOn(one -> one.enrollmentId().equals("NOT-ENROLLED")).singleElement()
                .satisfies(one -> assertThat(one.pushError()).isPresent());
        // NanoMDM answers 500 with only a push error here and has queued the command (the real server does the same,
        // RealNanoHubFailuresTest): reported as queued with the failed push, not as an error that invites a retry.
        EnqueueResult nobody = client.enqueue(List.of("NOT-ENROLLED"), MdmCommand.RestartDevice.now());
        assertThat(nobody.enrollments()).singleElement().satisfies(one -> assertThat(one.describe()).startsWith("queued, push failed: "));
    }

    @Test
    void theServerKnowsAnEnrollmentOnceItReportedAndNotifyMakesItSyncAgain() throws Exception {
        enrollCluster(1, "26.1");
        await("first report", WAIT, () -> client.enrollment(ids.getFirst()).declarativeStatusSeen());
        assertThat(client.enrollment(ids.getFirst()).lastStatusReport()).isPresent();
        assertThat(client.enrollment(ids.getFirst()).bootstrapToken()).isEqualTo(io.macfleet.mdm.EnrollmentState.BootstrapToken.NOT_EXPOSED_BY_SERVER);
        assertThat(client.enrollment("NEVER-ENROLLED").declarativeStatusSeen()).isFalse();

        // A change with nonotify reaches the device only after POST /notify, as with KMFDDM.
        ObjectNode payload = JSON.createObjectNode().put("Echo", "hello");
        client.putDeclaration(new Declaration("com.apple.configuration.management.test", "com.example.echo", payload));
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        String auth = "Basic " + java.util.Base64.getEncoder().encodeToString("nanohub:hub-key".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        java.util.function.Function<String, Integer> put = path -> {
            try {
                return http.send(java.net.http.HttpRequest.newBuilder(hub.url().resolve(path)).header("Authorization", auth)
                        .method(path.startsWith("/api/v1/ddm/notify") ? "POST" : "PUT", java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
        assertThat(put.apply("/api/v1/ddm/set-declarations/quiet?declaration=com.example.echo&nonotify=1")).isEqualTo(204);
        assertThat(put.apply("/api/v1/ddm/enrollment-sets/" + ids.getFirst() + "?set=quiet&nonotify=true")).isEqualTo(204);
        MdmTestSupport.sleep(200);
        assertThat(hub.deliveries(ids.getFirst())).isEmpty();
        assertThat(put.apply("/api/v1/ddm/notify?id=" + ids.getFirst())).isEqualTo(204);
        await("delivery after notify", WAIT, () -> hub.deliveries(ids.getFirst()).size() == 1);
    }

    @Test
    void theSimulatedServerRefusesAWrongKeyAndMisbehavesOnRequest() throws Exception {
        Path wrongKey = state.resolve("wrong.key");
        Files.writeString(wrongKey, "not-the-key");
        NanoHubClient intruder = new NanoHubClient(hub.url(), SecretReference.of("file:" + wrongKey), Duration.ofSeconds(2));
        assertThatThrownBy(() -> intruder.declarationStatus(List.of("X"))).isInstanceOfSatisfying(MdmServerException.class,
                e -> assertThat(e.problem()).isEqualTo(MdmServerException.Problem.UNAUTHORIZED));

        assertThatThrownBy(() -> client.addToSet("s", "never-stored")).isInstanceOfSatisfying(MdmServerException.class, e -> {
            assertThat(e.problem()).isEqualTo(MdmServerException.Problem.SERVER_ERROR);
        }).hasMessageContaining("HTTP 500: declaration not found: never-stored");

        hub.setFault(SimulatedNanoHub.ServerFault.INTERNAL_ERROR);
        assertThatThrownBy(() -> client.declarationStatus(List.of("X"))).hasMessageContaining("HTTP 500: simulated storage failure");
        hub.setFault(SimulatedNanoHub.ServerFault.GARBAGE);
        assertThatThrownBy(() -> client.declarationStatus(List.of("X"))).isInstanceOfSatisfying(MdmServerException.class,
                e -> assertThat(e.problem()).isEqualTo(MdmServerException.Problem.MALFORMED_RESPONSE));
        hub.setFault(SimulatedNanoHub.ServerFault.HANG);
        NanoHubClient impatient = new NanoHubClient(hub.url(), SecretReference.of("file:" + state.resolve("nanohub.key")), Duration.ofMillis(500));
        assertThatThrownBy(() -> impatient.putDeclaration(new Declaration("t", "i", JSON.createObjectNode())))
                .isInstanceOfSatisfying(MdmServerException.class, e -> assertThat(e.problem()).isEqualTo(MdmServerException.Problem.TIMEOUT));
        hub.setFault(SimulatedNanoHub.ServerFault.NONE);
    }
}
