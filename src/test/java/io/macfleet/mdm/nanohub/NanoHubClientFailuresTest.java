package io.macfleet.mdm.nanohub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.mdm.MdmServerException;
import io.macfleet.mdm.MdmServerException.Problem;
import io.macfleet.secrets.SecretReference;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Every way a server can misbehave gives one typed error naming the server, the request and the trouble, in bounded time. */
class NanoHubClientFailuresTest {
    private final ReplayServer server = new ReplayServer();
    private final NanoHubClient client = new NanoHubClient(server.url(), "the-api-key", Duration.ofMillis(2_000));

    @AfterEach
    void stop() {
        server.close();
    }

    private MdmServerException failure(Runnable call) {
        try {
            call.run();
        } catch (MdmServerException e) {
            return e;
        }
        throw new AssertionError("expected an MdmServerException");
    }

    @Test
    void aRefusedKeyIsUnauthorizedAndTheMessageNeverShowsTheKey() {
        server.responder = request -> new ReplayServer.Answer(401, "Unauthorized\n",
                List.<String[]>of(new String[] {"Www-Authenticate", "Basic realm=\"NanoHUB API\""}), 0);
        MdmServerException e = failure(() -> client.assignSet("E1", "macfleet.c1"));
        assertThat(e.problem()).isEqualTo(Problem.UNAUTHORIZED);
        assertThat(e.getMessage()).contains("nanohub " + server.url(), "PUT /api/v1/ddm/enrollment-sets/E1", "401")
                .doesNotContain("the-api-key").doesNotContain("?set=");
    }

    @Test
    void aServerErrorCarriesKmfddmsErrorText() {
        server.responder = request -> ReplayServer.Answer.json(500, "{\"error\":\"empty set name\"}\n");
        MdmServerException e = failure(() -> client.assignSet("E1", "s"));
        assertThat(e.problem()).isEqualTo(Problem.SERVER_ERROR);
        assertThat(e.getMessage()).contains("HTTP 500: empty set name");
    }

    @Test
    void garbageInsteadOfJsonIsAMalformedResponseQuotingWhatCame() {
        server.responder = request -> ReplayServer.Answer.json(200, "<html>proxy login</html>");
        MdmServerException e = failure(() -> client.declarationStatus(List.of("E1")));
        assertThat(e.problem()).isEqualTo(Problem.MALFORMED_RESPONSE);
        assertThat(e.getMessage()).contains("GET /api/v1/ddm/declaration-status/E1", "not JSON", "proxy login");
    }

    @Test
    void jsonOfTheWrongShapeIsAMalformedResponse() {
        server.responder = request -> ReplayServer.Answer.json(200, "{\"E1\": {\"identifier\": \"x\"}}");
        assertThat(failure(() -> client.declarationStatus(List.of("E1"))).getMessage()).contains("declaration status of E1 is not a JSON array");
        server.responder = request -> ReplayServer.Answer.json(200, "[1,2]");
        assertThat(failure(() -> client.statusValues(List.of("E1"), "")).problem()).isEqualTo(Problem.MALFORMED_RESPONSE);
    }

    @Test
    void aStatusTheApiDoesNotDefineForAWriteIsUnexpected() {
        server.responder = request -> ReplayServer.Answer.json(200, "{}");
        MdmServerException e = failure(() -> client.addToSet("s", "d"));
        assertThat(e.problem()).isEqualTo(Problem.UNEXPECTED_STATUS);
        assertThat(e.getMessage()).contains("HTTP 200", "204 for a change");
    }

    @Test
    void aHungServerCostsTheDeadlineOnce() {
        server.responder = request -> new ReplayServer.Answer(204, "", List.of(), 8_000);
        long start = System.nanoTime();
        MdmServerException e = failure(() -> client.addToSet("s", "d"));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(e.problem()).isEqualTo(Problem.TIMEOUT);
        assertThat(e.getMessage()).contains("PUT /api/v1/ddm/set-declarations/s", "2000 ms");
        assertThat(millis).isBetween(1_900L, 5_000L);
    }

    @Test
    void nobodyListeningIsUnreachable() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        NanoHubClient nowhere = new NanoHubClient(URI.create("http://127.0.0.1:" + port), "k", Duration.ofSeconds(2));
        MdmServerException e = failure(() -> nowhere.enrollment("E1"));
        assertThat(e.problem()).isEqualTo(Problem.UNREACHABLE);
        assertThat(e.getMessage()).contains("127.0.0.1:" + port, "GET /api/v1/ddm/status-report/E1");
    }

    @Test
    void enqueueToNobodyIsAServerErrorNamingTheCommand() {
        server.responder = request -> ReplayServer.Answer.json(500,
                "{\"status\":{\"E1\":{\"push_error\":\"no push info\",\"command_error\":\"enrollment not found\"}},\"command_error\":\"enrollment not found\"}");
        MdmServerException e = failure(() -> client.enqueue(List.of("E1"), io.macfleet.mdm.MdmCommand.RestartDevice.now()));
        assertThat(e.getMessage()).contains("RestartDevice was not queued", "enrollment not found");
    }

    @Test
    void theKeyComesFromASecretReference() {
        assertThatThrownBy(() -> new NanoHubClient(server.url(), SecretReference.of("env:MACFLEET_TEST_NANOHUB_KEY_UNSET_1"), Duration.ofSeconds(1)))
                .hasMessageContaining("env:MACFLEET_TEST_NANOHUB_KEY_UNSET_1");
        String resolved = SecretReference.of("env:MACFLEET_NANOHUB_KEY").resolve(Map.of("MACFLEET_NANOHUB_KEY", "from-env"));
        assertThat(resolved).isEqualTo("from-env");
    }
}
