package io.macfleet.osupdate;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.ExitCodes;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** `macfleet os-update plan|apply --via ssh` through the service's own beans (the ssh method found by CDI), exit codes asserted. */
@QuarkusMainTest
class SshOsUpdateCliTest {
    static CampaignFixture fixture;
    static Path secret;

    @BeforeAll
    static void start() throws Exception {
        fixture = CampaignFixture.start(Files.createTempDirectory("macfleet-os-update-ssh-cli"), "127.0.0.191");
        secret = fixture.directory.resolve("volume-owner-password");
        Files.writeString(secret, "macfleet-demo\n");
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }


    /** The fixture's inventory with this volume owner for every machine. */
    private static String inventoryWithOwner(String user) throws Exception {
        Path directory = Files.createTempDirectory(fixture.directory, "inventory-" + user);
        String yaml = Files.readString(fixture.inventory.resolve("macfleet.yaml"))
                .replace("defaults:\n", "defaults:\n  volumeOwner:\n    user: " + user + "\n    password: \"file:" + secret + "\"\n");
        Files.writeString(directory.resolve("macfleet.yaml"), yaml);
        return directory.toString();
    }

    @Test
    void planBlocksAnAccountThatIsNoVolumeOwnerThenApplyUpdatesTheClusterViaSsh(QuarkusMainLauncher launcher) throws Exception {
        fixture.mac("studio-02").addAccountWithoutVolumeOwnership("operator", "operator-password");
        assertThat(launcher.launch("inventory", "apply", inventoryWithOwner("operator")).exitCode()).isZero();
        assertThat(launcher.launch("facts", "--cluster", CampaignFixture.CLUSTER).exitCode()).isZero();

        LaunchResult blocked = launcher.launch("os-update", "plan", "llm-a", "--to", "26.2", "--build", "25C56", "--via", "ssh");
        assertThat(blocked.exitCode()).as(blocked.getErrorOutput() + output(blocked)).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(output(blocked)).contains("Preflight for 26.2 (25C56) via ssh (nothing was changed):", "llm-a: blocked",
                "volume-owner: studio-01 has no local account 'operator'",
                "volume-owner: studio-02: account 'operator' (GeneratedUID ", "is not a volume owner of the startup disk");

        assertThat(launcher.launch("inventory", "apply", inventoryWithOwner("admin")).exitCode()).isZero();
        LaunchResult plan = launcher.launch("os-update", "plan", "llm-a", "--to", "26.2", "--build", "25C56", "--via", "ssh");
        assertThat(plan.exitCode()).as(plan.getErrorOutput() + output(plan)).isEqualTo(ExitCodes.OK);
        assertThat(output(plan)).contains("llm-a: ready", "studio-01        26.1 (25B78)       ok");

        LaunchResult applied = launcher.launch("os-update", "apply", "llm-a", "--to", "26.2", "--build", "25C56", "--via", "ssh", "--yes", "--actor", "alice");
        assertThat(applied.exitCode()).as(applied.getErrorOutput() + output(applied)).isEqualTo(ExitCodes.OK);
        assertThat(output(applied)).containsPattern("Campaign \\d+ succeeded: to 26.2 \\(25C56\\) via ssh");
        assertThat(fixture.releases()).containsOnly("26.2 25C56");
        assertThat(fixture.hub.declarationWrites()).isEmpty();
        for (String machine : fixture.machines) {
            assertThat(fixture.mac(machine).processArguments()).noneMatch(arguments -> arguments.contains("macfleet-demo"));
        }
    }
}
