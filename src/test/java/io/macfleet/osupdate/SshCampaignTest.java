package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.database.Jdbc;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.LoadResult;
import io.macfleet.osupdate.ssh.SshUpdateMethod;
import io.macfleet.ssh.JdbcHostKeyStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The campaign engine with {@code --via ssh}: a 4-Mac cluster goes from 26.1 to exactly 26.2 (25C56) through
 * softwareupdate with the volume owner's password on standard input, never serving with mixed versions; the password
 * is in no process argument on the Macs and in no audit entry. A wrong password stops the cluster with the machine
 * named.
 */
class SshCampaignTest {
    @TempDir
    Path directory;

    /** Adds the volume owner (a file: reference) to the fixture's inventory and applies it again. */
    static void withVolumeOwner(CampaignFixture fixture, String password) throws Exception {
        Path secret = fixture.directory.resolve("volume-owner-password");
        Files.writeString(secret, password + "\n");
        Path file = fixture.directory.resolve("inventory/macfleet.yaml");
        String yaml = Files.readString(file).replace("defaults:\n", "defaults:\n  volumeOwner:\n    user: admin\n    password: \"file:" + secret + "\"\n");
        Files.writeString(file, yaml);
        LoadResult result = InventoryLoader.load(file.getParent());
        assertThat(result.valid()).as(String.valueOf(result.errors())).isTrue();
        fixture.desiredState.apply(result.inventory(), "test", file.getParent().toString());
        // No `macfleet facts` first: the campaign's preflight gathers what its cabling check reads.
        assertThat(fixture.facts.latest(fixture.desiredState.machines(CampaignFixture.CLUSTER).stream().map(Machine::name).toList()))
                .as("facts stored before the campaign").isEmpty();
    }

    static OsUpdateCampaigns campaigns(CampaignFixture fixture) {
        SshUpdateMethod ssh = new SshUpdateMethod(fixture.ssh, new JdbcHostKeyStore(fixture.dataSource), new JdbcAuditLog(fixture.dataSource),
                SshUpdateMethod.Requirements.DEFAULTS);
        return new OsUpdateCampaigns(fixture.dataSource, fixture.desiredState, fixture.facts, fixture.cabling, List.of(fixture.mdm(), ssh),
                new OsUpdateCampaigns.Options(fixture.ssh, Duration.ofMillis(40), fixture.deadlines, Duration.ofSeconds(60)));
    }

    static OsUpdateCampaigns.Request viaSsh() {
        return new OsUpdateCampaigns.Request(List.of(CampaignFixture.CLUSTER), false, "26.2", Optional.of("25C56"), "ssh", 1, false,
                Optional.empty(), Optional.empty());
    }

    @Test
    void aClusterUpdatedThroughSshEndsOnOneVersionAndBuildAndThePasswordIsNeverShown() throws Exception {
        String password = "macfleet-demo";
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.171")) {
            withVolumeOwner(fixture, password);
            OsUpdateCampaigns campaigns = campaigns(fixture);
            CampaignView end;
            try (CampaignFixture.MixedVersionWatch watch = fixture.new MixedVersionWatch()) {
                end = campaigns.apply(viaSsh(), "alice");
                assertThat(watch.violations).isEmpty();
            }
            assertThat(end.status()).as(end.toString()).isEqualTo("succeeded");
            assertThat(fixture.releases()).containsOnly("26.2 25C56");
            assertThat(fixture.machines).allMatch(fixture::serving);
            assertThat(fixture.hub.declarationChanges()).as("nothing went through MDM").isEmpty();
            for (String machine : fixture.machines) {
                List<String> arguments = fixture.mac(machine).processArguments();
                assertThat(arguments).anyMatch(line -> line.contains("softwareupdate --install 'macOS Tahoe 26.2-25C56'") || line.contains("softwareupdate --install macOS Tahoe 26.2-25C56"));
                assertThat(arguments).as("process arguments on " + machine).noneMatch(line -> line.contains(password));
            }
            List<String> details = Jdbc.withConnection(fixture.dataSource, connection -> Jdbc.query(connection,
                    "select detail from audit_event", row -> row.getString(1)));
            assertThat(details).anyMatch(detail -> detail.contains("--stdinpass < <secret on standard input>"));
            assertThat(details).noneMatch(detail -> detail.contains(password));
        }
    }

    @Test
    void aWrongPasswordStopsTheClusterNamingTheMachineAndInstallsNothing() throws Exception {
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.181")) {
            withVolumeOwner(fixture, "macfleet-demo");
            fixture.mac("studio-03").changeVolumeOwnerPassword("changed-on-the-mac");
            CampaignView end = campaigns(fixture).apply(viaSsh(), "alice");
            assertThat(end.status()).as(end.toString()).isEqualTo("failed");
            CampaignView.MachineView studio03 = end.clusters().getFirst().machines().stream().filter(machine -> machine.machine().equals("studio-03"))
                    .findFirst().orElseThrow();
            assertThat(studio03.toString()).contains("studio-03: softwareupdate refused the volume owner's credentials (user 'admin'")
                    .contains("nothing was installed");
            assertThat(fixture.mac("studio-03").snapshot().release().version()).isEqualTo("26.1");
            assertThat(fixture.machines).noneMatch(fixture::serving);
        }
    }
}
