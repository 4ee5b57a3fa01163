package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.deployment.LaunchdService.LastExit;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** launchctl print on real-shaped captures (src/test/resources/launchd/SOURCES.md) and edge cases. */
class LaunchdServiceTest {

    static String fixture(String name) throws IOException {
        try (InputStream in = LaunchdServiceTest.class.getResourceAsStream("/launchd/" + name)) {
            assertThat(in).as("fixture " + name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void runningAgentWithCoalitionsThatRepeatStateAndActiveCount() throws IOException {
        LaunchdService service = LaunchdService.parse(0, fixture("print-agent-running-never-exited.txt"), "");
        assertThat(service).isEqualTo(new LaunchdService(true, "running", OptionalLong.of(48630), OptionalInt.of(1),
                new LastExit.NeverExited()));
        assertThat(service.running()).isTrue();
    }

    @Test
    void exitedCleanlyHasNoPid() throws IOException {
        LaunchdService service = LaunchdService.parse(0, fixture("print-agent-not-running-exit-0.txt"), "");
        assertThat(service).isEqualTo(new LaunchdService(true, "not running", OptionalLong.empty(), OptionalInt.of(1),
                new LastExit.Code(0, "")));
        assertThat(service.running()).isFalse();
    }

    @Test
    void aSignalReplacesTheExitCode() throws IOException {
        LaunchdService service = LaunchdService.parse(0, fixture("print-agent-running-after-signal.txt"), "");
        assertThat(service.lastExit()).isEqualTo(new LastExit.Signal(15, "Terminated"));
        assertThat(service.runs()).hasValue(2);
        assertThat(service.pid()).hasValue(16090);
    }

    @Test
    void aMissingProgramIsExConfig() throws IOException {
        LaunchdService service = LaunchdService.parse(0, fixture("print-agent-ex-config.txt"), "");
        assertThat(service.lastExit()).isEqualTo(new LastExit.Code(78, "EX_CONFIG"));
        assertThat(service.runs()).hasValue(3);
        assertThat(service.running()).isFalse();
    }

    @Test
    void daemonWithEndpointsReadsOnlyTopLevelState() throws IOException {
        LaunchdService service = LaunchdService.parse(0, fixture("print-daemon-running-endpoints.txt"), "");
        assertThat(service).isEqualTo(new LaunchdService(true, "running", OptionalLong.of(5474), OptionalInt.of(2),
                new LastExit.Code(255, "")));
    }

    @Test
    void nestedBlocksBeforeTheTopLevelLinesDoNotWin() {
        String output = "system/io.macfleet.node = {\n\tendpoints = {\n\t\t\"x\" = {\n\t\t\tstate = active\n\t\t\tpid = 99999\n"
                + "\t\t}\n\t}\n\tstate = running\n\tpid = 5474\n}\n";
        LaunchdService service = LaunchdService.parse(0, output, "");
        assertThat(service.state()).isEqualTo("running");
        assertThat(service.pid()).hasValue(5474);
    }

    @Test
    void couldNotFindServiceIsNotLoaded() throws IOException {
        assertThat(LaunchdService.parse(113, "", fixture("print-not-found.stderr.txt"))).isEqualTo(LaunchdService.notLoaded());
        assertThat(LaunchdService.parse(113, "", "").loaded()).isFalse();
    }

    @Test
    void unreadableValuesAreAbsentNotGuessed() {
        LaunchdService service = LaunchdService.parse(0, "system/x = {\n\tstate = running\n\tpid = 0\n\truns = many\n"
                + "\tlast exit code = exploded\n\tsome future field = 7\n}\n", "");
        assertThat(service.pid()).isEmpty();
        assertThat(service.runs()).isEmpty();
        assertThat(service.lastExit()).isEqualTo(new LastExit.Unreadable("exploded"));
        assertThat(service.running()).isFalse();
    }

    @Test
    void garbageIsLoadedButUnknown() {
        LaunchdService service = LaunchdService.parse(0, "hello\n", "");
        assertThat(service.state()).isEmpty();
        assertThat(service.running()).isFalse();
    }
}
