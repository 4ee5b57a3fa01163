package io.macfleet.osupdate;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.command.ExitCodes;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** `macfleet os-update` against the simulated NanoHUB and Macs the applied inventory names: plan, apply, status, errors and exit codes. */
@QuarkusMainTest
class OsUpdateCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static CampaignFixture fixture;

    @BeforeAll
    static void start() throws Exception {
        fixture = CampaignFixture.start(Files.createTempDirectory("macfleet-os-update-cli"), "127.0.0.66");
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }


    @Test
    void planApplyAndStatusWithClearErrors(QuarkusMainLauncher launcher) throws Exception {
        assertThat(launcher.launch("inventory", "apply", fixture.inventory.toString()).exitCode()).isZero();

        LaunchResult plan = launcher.launch("os-update", "plan", "llm-a", "--to", "26.2", "--build", "25C56");
        assertThat(plan.exitCode()).as(plan.getErrorOutput() + output(plan)).isEqualTo(ExitCodes.OK);
        assertThat(output(plan)).contains("Preflight for 26.2 (25C56) via mdm (nothing was changed):", "llm-a: ready", "studio-01        26.1 (25B78)       ok");
        assertThat(fixture.hub.declarationWrites()).isEmpty();

        LaunchResult unconfirmed = launcher.launch("os-update", "apply", "llm-a", "--to", "26.2");
        assertThat(unconfirmed.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unconfirmed.getErrorOutput()).contains("add --yes");
        LaunchResult unknown = launcher.launch("os-update", "plan", "llm-z", "--to", "26.2");
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.getErrorOutput()).contains("no cluster named 'llm-z' in the applied inventory (known: llm-a)");
        LaunchResult badVersion = launcher.launch("os-update", "plan", "llm-a", "--to", "26.two");
        assertThat(badVersion.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(badVersion.getErrorOutput()).contains("target macOS version '26.two' is not a version like 26.2");
        LaunchResult badMethod = launcher.launch("os-update", "plan", "llm-a", "--to", "26.2", "--via", "carrier-pigeon");
        assertThat(badMethod.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(badMethod.getErrorOutput()).contains("no update method 'carrier-pigeon' (available: mdm");

        LaunchResult applied = launcher.launch("os-update", "apply", "llm-a", "--to", "26.2", "--build", "25C56", "--yes", "--actor", "alice");
        assertThat(applied.exitCode()).as(applied.getErrorOutput() + output(applied)).isEqualTo(ExitCodes.OK);
        Matcher campaign = Pattern.compile("Campaign (\\d+) succeeded: to 26.2 \\(25C56\\) via mdm").matcher(output(applied));
        assertThat(campaign.find()).as(output(applied)).isTrue();
        String id = campaign.group(1);
        assertThat(fixture.releases()).containsOnly("26.2 25C56");
        assertThat(fixture.machines).allMatch(fixture::serving);

        LaunchResult status = launcher.launch("os-update", "status", id, "--json");
        assertThat(status.exitCode()).isZero();
        JsonNode view = JSON.readTree(output(status));
        assertThat(view.path("status").asText()).isEqualTo("succeeded");
        assertThat(view.path("createdBy").asText()).isEqualTo("alice");
        assertThat(view.path("clusters").path(0).path("machines").path(3).path("buildVersion").asText()).isEqualTo("25C56");
        assertThat(output(launcher.launch("os-update", "status"))).contains(id + " ", "succeeded", "26.2 (25C56)", "llm-a:done");

        LaunchResult missing = launcher.launch("os-update", "status", "9999");
        assertThat(missing.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.getErrorOutput()).contains("no OS-update campaign 9999");
        LaunchResult pause = launcher.launch("os-update", "pause", id);
        assertThat(pause.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(pause.getErrorOutput()).contains("campaign " + id + " is succeeded: only a running campaign can be paused");
        LaunchResult resume = launcher.launch("os-update", "resume", id);
        assertThat(resume.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(resume.getErrorOutput()).contains("already succeeded");

        // After the campaign the stored facts say 26.2 everywhere: drift is clean.
        LaunchResult drift = launcher.launch("drift", "--cluster", "llm-a");
        assertThat(drift.exitCode()).as(output(drift)).isZero();
    }
}
