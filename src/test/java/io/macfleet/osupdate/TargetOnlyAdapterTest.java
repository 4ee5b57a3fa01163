package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.inventory.Machine;
import io.macfleet.mdm.Change;
import io.macfleet.mdm.EnrollmentState;
import io.macfleet.mdm.MdmConnection;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.mdm.SoftwareUpdateStatus;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The MDM method over a server that takes a target and no declarations, shaped as Fleet's {@code mdm.macos_updates}
 * is (one setting per team: minimum version and deadline): a small honest fake of that shape, to keep the
 * {@link MdmConnection} interface one that such an adapter can implement.
 */
class TargetOnlyAdapterTest {

    /** One team setting per group; the host's OS version as the server last saw it. */
    static final class TeamSettingServer implements MdmConnection {
        final List<String> settings = new ArrayList<>();
        String hostVersion = "26.1";

        @Override
        public String describe() {
            return "fleet https://fleet.example.com";
        }

        @Override
        public EnrollmentState enrollment(String enrollmentId) {
            return new EnrollmentState(enrollmentId, true, Optional.empty(), EnrollmentState.BootstrapToken.NOT_EXPOSED_BY_SERVER);
        }

        @Override
        public List<Change> enforce(String group, OsUpdateTarget target, List<String> enrollmentIds) {
            String setting = group + " minimum_version=" + target.osVersion() + " deadline=" + target.installBy().toLocalDate();
            if (settings.contains(setting)) {
                return List.of(Change.UNCHANGED);
            }
            settings.add(setting);
            return List.of(Change.CHANGED);
        }

        @Override
        public List<SoftwareUpdateStatus> status(List<String> enrollmentIds) {
            return enrollmentIds.stream().map(id -> new SoftwareUpdateStatus(id, Optional.empty(), Optional.empty(), Optional.empty(),
                    Optional.of(hostVersion), Optional.empty())).toList();
        }
    }

    @Test
    void aServerWithoutDeclarationsTakesTheTargetOnceAndReportsTheVersion() {
        TeamSettingServer server = new TeamSettingServer();
        MdmUpdateMethod method = new MdmUpdateMethod(server, null, null);
        Machine machine = new Machine("studio-01", "127.0.0.1", null, null, null, null, null, "llm-a", List.of(), "HOST-1", null, Map.of());
        OsUpdateTarget target = new OsUpdateTarget("26.2", Optional.empty(), LocalDateTime.of(2026, 12, 1, 2, 0));

        StartResult first = method.start(machine, target);
        assertThat(first.failure()).isEmpty();
        assertThat(first.actions()).singleElement().isEqualTo(new StartResult.Action("enforcement", "llm-a <- 26.2", true));
        assertThat(method.start(machine, target).actions()).singleElement().satisfies(action -> assertThat(action.changed()).isFalse());
        assertThat(server.settings).containsExactly("llm-a minimum_version=26.2 deadline=2026-12-01");

        assertThat(method.progress(machine, target).phase()).isEqualTo(UpdateProgress.Phase.WAITING);
        server.hostVersion = "26.2";
        assertThat(method.progress(machine, target).phase()).isEqualTo(UpdateProgress.Phase.DONE);
    }
}
