package io.macfleet.mdm.nanohub;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.macfleet.mdm.Change;
import io.macfleet.mdm.Declaration;
import io.macfleet.mdm.DeclarationStatus;
import io.macfleet.mdm.EnqueueResult;
import io.macfleet.mdm.MdmCommand;
import io.macfleet.mdm.SoftwareUpdateStatus;
import io.macfleet.mdm.StatusValue;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * NanoHubClient against the request and response shapes of NanoHUB's, KMFDDM's and NanoMDM's own docs and tests
 * (src/test/resources/nanohub/SOURCES.md): what it sends is what those projects send, and it reads what they answer.
 */
class NanoHubRecordedShapesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path FIXTURES = Path.of("src/test/resources/nanohub");
    private final ReplayServer server = new ReplayServer();
    private final NanoHubClient client = new NanoHubClient(server.url(), "s3cret-key", Duration.ofSeconds(5));

    @AfterEach
    void stop() {
        server.close();
    }

    private static String fixture(String name) throws Exception {
        return Files.readString(FIXTURES.resolve(name), StandardCharsets.UTF_8);
    }

    @Test
    void putDeclarationSendsKmfddmsE2eBodyWithBasicAuthAndReads204AsChangedAnd304AsUnchanged() throws Exception {
        JsonNode recorded = JSON.readTree(fixture("kmfddm-declaration-put-request.json"));
        Declaration declaration = new Declaration(recorded.path("Type").asText(), recorded.path("Identifier").asText(),
                (ObjectNode) recorded.path("Payload"));
        server.responder = request -> ReplayServer.Answer.empty(204);
        assertThat(client.putDeclaration(declaration)).isEqualTo(Change.CHANGED);
        server.responder = request -> ReplayServer.Answer.empty(304);
        assertThat(client.putDeclaration(declaration)).isEqualTo(Change.UNCHANGED);

        ReplayServer.Received sent = server.received.getFirst();
        assertThat(sent.method()).isEqualTo("PUT");
        assertThat(sent.pathAndQuery()).isEqualTo("/api/v1/ddm/declarations");
        assertThat(sent.contentType()).isEqualTo("application/json");
        assertThat(JSON.readTree(sent.body())).isEqualTo(recorded);
        assertThat(sent.authorization()).isEqualTo("Basic " + Base64.getEncoder().encodeToString("nanohub:s3cret-key".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void setAndEnrollmentAssignmentsUseKmfddmsPathsAndQueryParameters() {
        server.responder = request -> ReplayServer.Answer.empty(204);
        assertThat(client.addToSet("golang_test_set_793BBBD50EE9", "com.example.test")).isEqualTo(Change.CHANGED);
        server.responder = request -> ReplayServer.Answer.empty(304);
        assertThat(client.assignSet("golang_test_enr_730E7C49E900", "golang_test_set_793BBBD50EE9")).isEqualTo(Change.UNCHANGED);
        assertThat(server.received).extracting(ReplayServer.Received::pathAndQuery).containsExactly(
                "/api/v1/ddm/set-declarations/golang_test_set_793BBBD50EE9?declaration=com.example.test",
                "/api/v1/ddm/enrollment-sets/golang_test_enr_730E7C49E900?set=golang_test_set_793BBBD50EE9");
        assertThat(server.received).extracting(ReplayServer.Received::method).containsOnly("PUT");
    }

    @Test
    void declarationStatusReadsTheNotReferencedByActivationReasonOfKmfddmsTest() throws Exception {
        String body = fixture("kmfddm-declaration-status-response.json");
        server.responder = request -> ReplayServer.Answer.json(200, body);
        List<DeclarationStatus> statuses = client.declarationStatus(List.of("golang_test_enr_E4E7C11ECD86"));

        assertThat(server.received.getFirst().pathAndQuery()).isEqualTo("/api/v1/ddm/declaration-status/golang_test_enr_E4E7C11ECD86");
        assertThat(statuses).hasSize(1);
        DeclarationStatus status = statuses.getFirst();
        assertThat(status.enrollmentId()).isEqualTo("golang_test_enr_E4E7C11ECD86");
        assertThat(status.identifier()).isEqualTo("com.example.test");
        assertThat(status.active()).isFalse();
        assertThat(status.validity()).isEqualTo(DeclarationStatus.Validity.UNKNOWN);
        assertThat(status.current()).isFalse();
        assertThat(status.applied()).isFalse();
        assertThat(status.serverToken()).isEqualTo("7c6d85989e823101");
        assertThat(status.statusReceived()).contains(Instant.parse("2023-08-04T06:26:02Z"));
        assertThat(status.reasons()).singleElement().satisfies(reason -> {
            assertThat(reason.code()).isEqualTo("Info.NotReferencedByActivation");
            assertThat(reason.description()).contains("is not referenced by an activation");
            assertThat(JSON.readTree(reason.details()).path("ServerToken").asText()).isEqualTo("7c6d85989e823101");
        });
    }

    @Test
    void declarationStatusOfAnEnrollmentThatNeverReportedIsEmpty() {
        // KMFDDM's e2e test: an enrollment with no status yet answers 200 without an error.
        server.responder = request -> ReplayServer.Answer.json(200, "{}\n");
        assertThat(client.declarationStatus(List.of("golang_test_enr_4A5B529A3174"))).isEmpty();
    }

    @Test
    void statusValuesSendThePrefixAndReadKmfddmsExtractedDeviceValues() throws Exception {
        String body = fixture("kmfddm-status-values-response.json");
        server.responder = request -> ReplayServer.Answer.json(200, body);
        List<StatusValue> values = client.statusValues(List.of("golang_test_enr_87C029C236E0", "other"), ".StatusItems.device.%");

        assertThat(server.received.getFirst().pathAndQuery())
                .isEqualTo("/api/v1/ddm/status-values/golang_test_enr_87C029C236E0,other?prefix=.StatusItems.device.%25");
        assertThat(values).hasSize(7).allSatisfy(value -> assertThat(value.enrollmentId()).isEqualTo("golang_test_enr_87C029C236E0"));
        assertThat(values).filteredOn(value -> value.path().endsWith(".operating-system.build-version"))
                .singleElement().extracting(StatusValue::value).isEqualTo("22E261");
    }

    @Test
    void softwareUpdateStatusWalksIncrementalReportsAndTakesTheOsVersionFromTheFirstFullReport() throws Exception {
        // Newest report: only softwareupdate items changed; the one before: the device's first full report (13.3.1).
        String newest = fixture("status-report-softwareupdate-composed.json");
        String first = fixture("kmfddm-status-report-first.json");
        server.responder = request -> {
            if (request.pathAndQuery().endsWith("index=0")) {
                return new ReplayServer.Answer(200, newest, List.of(new String[] {"Content-Type", "application/json"},
                        new String[] {"X-Status-Report-Index", "1"}, new String[] {"X-Status-Report-ID", "b2"},
                        new String[] {"Last-Modified", "Fri, 04 Aug 2023 06:30:00 GMT"}), 0);
            }
            if (request.pathAndQuery().endsWith("index=1")) {
                return ReplayServer.Answer.json(200, first);
            }
            return ReplayServer.Answer.json(500, "{\"error\":\"index out of range: too high (2)\"}\n");
        };
        SoftwareUpdateStatus status = client.softwareUpdateStatus("0000FE00-5FADE97DCBBBEDA5");

        assertThat(server.received).extracting(ReplayServer.Received::pathAndQuery).containsExactly(
                "/api/v1/ddm/status-report/0000FE00-5FADE97DCBBBEDA5?index=0",
                "/api/v1/ddm/status-report/0000FE00-5FADE97DCBBBEDA5?index=1");
        assertThat(status.installState()).contains(SoftwareUpdateStatus.InstallState.DOWNLOADING);
        assertThat(status.pendingVersion()).contains(new SoftwareUpdateStatus.PendingVersion("26.2", "25C56"));
        assertThat(status.failureReason()).contains(new SoftwareUpdateStatus.FailureReason(0, Optional.empty(), Optional.empty()));
        assertThat(status.osVersion()).contains("13.3.1");
        assertThat(status.buildVersion()).contains("22E261");
    }

    @Test
    void statusReportReadsKmfddmsHeaders() throws Exception {
        String first = fixture("kmfddm-status-report-first.json");
        server.responder = request -> new ReplayServer.Answer(200, first, List.of(new String[] {"Content-Type", "application/json"},
                new String[] {"X-Status-Report-Index", "0"}, new String[] {"X-Status-Report-ID", "go_test_trace_id"},
                new String[] {"Last-Modified", "Fri, 04 Aug 2023 06:26:02 GMT"}), 0);
        var report = client.statusReport("golang_test_enr_87C029C236E0", 0).orElseThrow();
        assertThat(report.statusId()).contains("go_test_trace_id");
        assertThat(report.received()).contains(Instant.parse("2023-08-04T06:26:02Z"));
        assertThat(report.body().path("StatusItems").path("device").path("identifier").path("serial-number").asText()).isEqualTo("ZRMXJQTTFX");

        server.responder = request -> ReplayServer.Answer.json(404, "{\"error\":\"status report not found\"}\n");
        assertThat(client.statusReport("golang_test_enr_87C029C236E0", 0)).isEmpty();
    }

    @Test
    void enqueueSendsACommandPlistOfTheRecordedShapeAndReadsNanomdmsAnswers() throws Exception {
        String answer = fixture("nanomdm-enqueue-response.json");
        server.responder = request -> ReplayServer.Answer.json(200, answer);
        MdmCommand command = new MdmCommand.RestartDevice("9b7c63eb-14b4-4739-96b0-750a5c967371", false);
        EnqueueResult result = client.enqueue(List.of("99385AF6-44CB-5621-A678-A321F4D9A2C8", "E9085AF6-DCCB-5661-A678-BCE8F4D9A2C8"), command);

        ReplayServer.Received sent = server.received.getFirst();
        assertThat(sent.method()).isEqualTo("PUT");
        assertThat(sent.pathAndQuery()).isEqualTo("/api/v1/nanomdm/enqueue/99385AF6-44CB-5621-A678-A321F4D9A2C8,E9085AF6-DCCB-5661-A678-BCE8F4D9A2C8");
        // Same layout as NanoMDM's recorded example: only the request type and UUID differ.
        String recorded = fixture("nanomdm-enqueue-request.plist").replace("ProfileList", "RestartDevice")
                .replace("d7408b5d-f314-461f-bc5e-4ff107c03857", "9b7c63eb-14b4-4739-96b0-750a5c967371");
        assertThat(sent.body()).isEqualTo(recorded);
        assertThat(result.commandUuid()).isEqualTo("9b7c63eb-14b4-4739-96b0-750a5c967371");
        assertThat(result.enrollments()).extracting(EnqueueResult.PerEnrollment::enrollmentId)
                .containsExactly("99385AF6-44CB-5621-A678-A321F4D9A2C8", "E9085AF6-DCCB-5661-A678-BCE8F4D9A2C8");
        assertThat(result.enrollments().getFirst().pushId()).contains("4DE6E126-CC6C-37B2-7350-3AD1871C298F");
        assertThat(result.enrollments()).allSatisfy(one -> assertThat(one.queued()).isTrue());

        String noPush = fixture("nanomdm-enqueue-nopush-response.json");
        server.responder = request -> ReplayServer.Answer.json(200, noPush);
        EnqueueResult quiet = client.enqueue(List.of("99385AF6-44CB-5621-A678-A321F4D9A2C8"), MdmCommand.DeviceInformation.of("OSVersion", "BuildVersion"));
        assertThat(quiet.requestType()).isEqualTo("CertificateList");
        // An answer without per-enrollment entries and without errors: queued for the one asked, no push tried.
        assertThat(quiet.enrollments()).singleElement().satisfies(one -> assertThat(one.describe()).isEqualTo("queued"));
        assertThat(server.received.get(1).body()).contains("<key>Queries</key>", "<string>OSVersion</string>", "<string>DeviceInformation</string>");
    }
}
