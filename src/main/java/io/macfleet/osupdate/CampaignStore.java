package io.macfleet.osupdate;

import io.macfleet.database.Jdbc;
import io.macfleet.mdm.OsUpdateTarget;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Campaigns, their clusters and machines, what was sent, and clusters down for maintenance (migration V7_1). Every
 * write is one statement or one transaction, so a process killed between two of them leaves a state the engine can
 * resume from.
 */
final class CampaignStore {
    static final int TEXT_CAP = 3900;

    /** What the engine needs of a campaign row. */
    record Campaign(long id, OsUpdateTarget target, String method, String serviceLabel, int clustersAtOnce, boolean continueOnFailure,
                    CampaignStatus status, String createdBy) {
    }

    /** What the engine needs of a machine row. */
    record MachineRow(String machine, String cluster, MachinePhase phase, StartState startState, Boolean serviceWasLoaded, Boolean rdmaBefore,
                      Instant phaseSince) {
    }

    private final DataSource dataSource;

    CampaignStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    long create(OsUpdateTarget target, String method, String serviceLabel, int clustersAtOnce, boolean continueOnFailure,
                Map<String, List<String>> machinesByCluster, String actor, Instant now) {
        return Jdbc.inTransaction(dataSource, connection -> {
            long id;
            try (var statement = connection.prepareStatement("insert into os_update_campaign (target_version, target_build, install_by, method,"
                    + " service_label, clusters_at_once, continue_on_failure, status, created_by, created_at, updated_at)"
                    + " values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", new String[] {"id"})) {
                statement.setString(1, target.osVersion());
                statement.setString(2, target.buildVersion().orElse(null));
                statement.setString(3, target.targetLocalDateTime());
                statement.setString(4, method);
                statement.setString(5, serviceLabel);
                statement.setInt(6, clustersAtOnce);
                statement.setBoolean(7, continueOnFailure);
                statement.setString(8, CampaignStatus.RUNNING.wire());
                statement.setString(9, actor);
                statement.setObject(10, time(now));
                statement.setObject(11, time(now));
                statement.executeUpdate();
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    keys.next();
                    id = keys.getLong(1);
                }
            }
            int position = 0;
            for (Map.Entry<String, List<String>> cluster : machinesByCluster.entrySet()) {
                Jdbc.update(connection, "insert into os_update_cluster (campaign_id, cluster, position, step, updated_at) values (?, ?, ?, ?, ?)",
                        id, cluster.getKey(), position++, ClusterStep.PENDING.wire(), time(now));
                for (String machine : cluster.getValue()) {
                    Jdbc.update(connection, "insert into os_update_machine (campaign_id, machine, cluster, phase, start_state, phase_since, updated_at)"
                            + " values (?, ?, ?, ?, ?, ?, ?)", id, machine, cluster.getKey(), MachinePhase.PENDING.wire(), StartState.NOT_SENT.wire(),
                            time(now), time(now));
                }
            }
            return id;
        });
    }

    Optional<Campaign> campaign(long id) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, "select * from os_update_campaign where id = ?",
                row -> new Campaign(row.getLong("id"), new OsUpdateTarget(row.getString("target_version"), Optional.ofNullable(row.getString("target_build")),
                        LocalDateTime.parse(row.getString("install_by"))), row.getString("method"), row.getString("service_label"),
                        row.getInt("clusters_at_once"), row.getBoolean("continue_on_failure"), CampaignStatus.of(row.getString("status")),
                        row.getString("created_by")), id)).stream().findFirst();
    }

    void setStatus(long id, CampaignStatus status, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "update os_update_campaign set status = ?, updated_at = ? where id = ?",
                status.wire(), time(now), id));
    }

    /** Sets the status only when it is {@code expected} now; false when it was something else. */
    boolean changeStatus(long id, CampaignStatus expected, CampaignStatus status, Instant now) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_campaign set status = ?, updated_at = ? where id = ? and status = ?", status.wire(), time(now), id, expected.wire())) == 1;
    }

    void setInstallBy(long id, OsUpdateTarget target, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "update os_update_campaign set install_by = ?, updated_at = ? where id = ?",
                target.targetLocalDateTime(), time(now), id));
    }

    boolean acquireLease(long id, String owner, Instant now, Instant staleBefore, String deadOwner) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_campaign set lease_owner = ?, lease_heartbeat = ? where id = ? and (lease_owner is null or lease_owner = ?"
                        + " or lease_heartbeat < ? or lease_owner = ?)",
                owner, time(now), id, owner, time(staleBefore), deadOwner == null ? "" : deadOwner) == 1);
    }

    Optional<String> leaseOwner(long id) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, "select lease_owner from os_update_campaign where id = ?",
                row -> Optional.ofNullable(row.getString(1)), id)).stream().findFirst().flatMap(owner -> owner);
    }

    void heartbeat(long id, String owner, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_campaign set lease_heartbeat = ? where id = ? and lease_owner = ?", time(now), id, owner));
    }

    void releaseLease(long id, String owner) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_campaign set lease_owner = null, lease_heartbeat = null where id = ? and lease_owner = ?", id, owner));
    }

    // ---- clusters

    /** Cluster name to its step, in campaign order. */
    Map<String, ClusterStep> clusterSteps(long id) {
        Map<String, ClusterStep> steps = new LinkedHashMap<>();
        Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, "select cluster, step from os_update_cluster where campaign_id = ? order by position",
                row -> steps.put(row.getString(1), ClusterStep.of(row.getString(2))), id));
        return steps;
    }

    Optional<ClusterStep> failedStep(long id, String cluster) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select failed_step from os_update_cluster where campaign_id = ? and cluster = ?", row -> Optional.ofNullable(row.getString(1)), id, cluster))
                .stream().findFirst().flatMap(step -> step).map(ClusterStep::of);
    }

    void setClusterStep(long id, String cluster, ClusterStep step, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_cluster set step = ?, failed_step = null, failure = null, updated_at = ? where campaign_id = ? and cluster = ?",
                step.wire(), time(now), id, cluster));
    }

    void failCluster(long id, String cluster, ClusterStep at, String failure, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_cluster set step = ?, failed_step = ?, failure = ?, updated_at = ? where campaign_id = ? and cluster = ?",
                ClusterStep.FAILED.wire(), at.wire(), cap(failure), time(now), id, cluster));
    }

    // ---- machines

    List<MachineRow> machines(long id, String cluster) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select * from os_update_machine where campaign_id = ? and cluster = ? order by machine",
                row -> new MachineRow(row.getString("machine"), row.getString("cluster"), MachinePhase.of(row.getString("phase")),
                        StartState.of(row.getString("start_state")),
                        (Boolean) row.getObject("service_was_loaded"), (Boolean) row.getObject("rdma_before"), instant(row, "phase_since")), id, cluster));
    }

    /** The machine's phase and start state now. */
    Optional<MachineRow> machine(long id, String machine) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select * from os_update_machine where campaign_id = ? and machine = ?",
                row -> new MachineRow(row.getString("machine"), row.getString("cluster"), MachinePhase.of(row.getString("phase")),
                        StartState.of(row.getString("start_state")), (Boolean) row.getObject("service_was_loaded"), (Boolean) row.getObject("rdma_before"),
                        instant(row, "phase_since")), id, machine)).stream().findFirst();
    }

    /** Sets the phase (and phase_since when it changed), versions when known, detail and fix (null clears them). */
    void setMachine(long id, String machine, MachinePhase phase, Optional<String> osVersion, Optional<String> buildVersion, String detail, String fix, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_machine set phase_since = case when phase = ? then phase_since else ? end, phase = ?,"
                        + " os_version = coalesce(?, os_version), build_version = coalesce(?, build_version), detail = ?, fix = ?, updated_at = ?"
                        + " where campaign_id = ? and machine = ?",
                phase.wire(), time(now), phase.wire(), osVersion.orElse(null), buildVersion.orElse(null), cap(detail), cap(fix), time(now), id, machine));
    }

    void setRdmaBefore(long id, String machine, boolean enabled) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_machine set rdma_before = ? where campaign_id = ? and machine = ? and rdma_before is null", enabled, id, machine));
    }

    /** Written once: a resumed drain that finds the daemon already stopped must not forget it was running. */
    void recordServiceWasLoaded(long id, String machine, boolean loaded) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_machine set service_was_loaded = ? where campaign_id = ? and machine = ? and service_was_loaded is null", loaded, id, machine));
    }

    void setStartState(long id, String machine, StartState state, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_machine set start_state = ?, updated_at = ? where campaign_id = ? and machine = ?", state.wire(), time(now), id, machine));
    }

    /** Restarts every deadline clock of the cluster's machines (a resumed campaign gives each phase a full slot again). */
    void restartPhaseClocks(long id, String cluster, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update os_update_machine set phase_since = ? where campaign_id = ? and cluster = ?", time(now), id, cluster));
    }

    /** What start sent, and the machine marked sent, in one transaction. */
    void recordSent(long id, String machine, List<StartResult.Action> actions, Instant now) {
        Jdbc.inTransaction(dataSource, connection -> {
            for (StartResult.Action action : actions) {
                Jdbc.update(connection, "insert into os_update_sent (campaign_id, machine, kind, subject, changed, sent_at) values (?, ?, ?, ?, ?, ?)",
                        id, machine, action.kind(), cap(action.subject()), action.changed(), time(now));
            }
            Jdbc.update(connection, "update os_update_machine set start_state = ?, updated_at = ? where campaign_id = ? and machine = ?",
                    StartState.SENT.wire(), time(now), id, machine);
            return null;
        });
    }

    /** Every action start sent for the campaign, as "machine kind subject changed|unchanged", in order. */
    List<String> sent(long id) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select machine, kind, subject, changed from os_update_sent where campaign_id = ? order by id",
                row -> row.getString(1) + " " + row.getString(2) + " " + row.getString(3) + " " + (row.getBoolean(4) ? "changed" : "unchanged"), id));
    }

    // ---- maintenance

    void enterMaintenance(String cluster, long campaignId, String reason, Instant now) {
        Jdbc.withConnection(dataSource, connection -> {
            boolean present = !Jdbc.query(connection, "select 1 from cluster_maintenance where cluster = ?", row -> 1, cluster).isEmpty();
            if (!present) {
                Jdbc.update(connection, "insert into cluster_maintenance (cluster, campaign_id, reason, since) values (?, ?, ?, ?)",
                        cluster, campaignId, cap(reason), time(now));
            }
            return null;
        });
    }

    void leaveMaintenance(String cluster, long campaignId) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection, "delete from cluster_maintenance where cluster = ? and campaign_id = ?",
                cluster, campaignId));
    }

    /** Clusters down for maintenance now: cluster to "campaign N: reason". */
    Map<String, String> maintenance() {
        Map<String, String> clusters = new LinkedHashMap<>();
        Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection, "select cluster, campaign_id, reason from cluster_maintenance order by cluster",
                row -> clusters.put(row.getString(1), "campaign " + row.getLong(2) + ": " + row.getString(3))));
        return clusters;
    }

    // ---- views

    List<Long> ids(int limit) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select id from os_update_campaign order by id desc fetch first " + Math.max(1, limit) + " rows only", row -> row.getLong(1)));
    }

    Optional<CampaignView> view(long id) {
        return Jdbc.withConnection(dataSource, connection -> {
            List<CampaignView.MachineView> machines = Jdbc.query(connection, "select * from os_update_machine where campaign_id = ? order by machine",
                    row -> new CampaignView.MachineView(row.getString("machine"), row.getString("cluster"), row.getString("phase"),
                            row.getString("start_state"), Optional.ofNullable(row.getString("os_version")), Optional.ofNullable(row.getString("build_version")),
                            Optional.ofNullable(row.getString("detail")), Optional.ofNullable(row.getString("fix")), instant(row, "phase_since")), id);
            List<CampaignView.ClusterView> clusters = Jdbc.query(connection, "select * from os_update_cluster where campaign_id = ? order by position",
                    row -> {
                        String cluster = row.getString("cluster");
                        return new CampaignView.ClusterView(cluster, row.getInt("position"), row.getString("step"),
                                Optional.ofNullable(row.getString("failed_step")), Optional.ofNullable(row.getString("failure")), instant(row, "updated_at"),
                                machines.stream().filter(machine -> machine.cluster().equals(cluster)).toList());
                    }, id);
            return Jdbc.query(connection, "select * from os_update_campaign where id = ?",
                    row -> new CampaignView(row.getLong("id"), row.getString("status"), row.getString("target_version"),
                            Optional.ofNullable(row.getString("target_build")), row.getString("install_by"), row.getString("method"),
                            row.getString("service_label"), row.getInt("clusters_at_once"), row.getBoolean("continue_on_failure"),
                            row.getString("created_by"), instant(row, "created_at"), instant(row, "updated_at"), clusters), id).stream().findFirst();
        });
    }

    private static Instant instant(ResultSet row, String column) throws SQLException {
        OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }

    static OffsetDateTime time(Instant instant) {
        return instant.atOffset(ZoneOffset.UTC);
    }

    static String cap(String text) {
        if (text == null) {
            return null;
        }
        return text.length() <= TEXT_CAP ? text : text.substring(0, TEXT_CAP) + "...";
    }
}
