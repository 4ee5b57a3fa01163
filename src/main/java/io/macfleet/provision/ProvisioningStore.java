package io.macfleet.provision;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.database.Jdbc;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/** Runs, step states and operator confirmations in the database (migrations V4_1, V4_2). */
@jakarta.inject.Singleton
final class ProvisioningStore {

    static final int SUMMARY_CAP = 2000;
    private static final ObjectMapper JSON = new ObjectMapper();
    private final DataSource dataSource;

    @jakarta.inject.Inject
    ProvisioningStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    long createRun(Playbook playbook, String targetKey, String cluster, List<String> machines, Map<String, Object> options,
                   List<PlaybookStep> steps, String startedBy, Instant now) {
        return Jdbc.inTransaction(dataSource, connection -> {
            long id;
            try (var statement = connection.prepareStatement("insert into provisioning_run (playbook, playbook_hash, target_key, cluster, machines,"
                    + " options, status, started_by, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", new String[] {"id"})) {
                statement.setString(1, playbook.name());
                statement.setString(2, playbook.contentHash());
                statement.setString(3, targetKey);
                statement.setString(4, cluster);
                statement.setString(5, String.join(",", machines));
                statement.setString(6, json(options));
                statement.setString(7, RunState.RUNNING.label());
                statement.setString(8, startedBy);
                statement.setObject(9, time(now));
                statement.setObject(10, time(now));
                statement.executeUpdate();
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    keys.next();
                    id = keys.getLong(1);
                }
            }
            for (String machine : machines) {
                for (int position = 0; position < steps.size(); position++) {
                    Jdbc.update(connection, "insert into provisioning_step (run_id, machine, step, position, status, attempts) values (?, ?, ?, ?, ?, 0)",
                            id, machine, steps.get(position).name(), position, StepStatus.PENDING.label());
                }
            }
            return id;
        });
    }

    /** The newest run for the target that did not succeed, if any. */
    Optional<RunView.Run> latestUnfinished(String targetKey) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select * from provisioning_run where target_key = ? order by id desc fetch first 1 rows only", this::run, targetKey))
                .stream().findFirst().filter(run -> RunState.fromLabel(run.status()) != RunState.SUCCEEDED);
    }

    /**
     * Takes the run's lease when it is free, already ours, stale (no heartbeat since {@code staleBefore}) or held by a
     * process of this host that no longer exists.
     */
    boolean acquireLease(long runId, String owner, Instant now, Instant staleBefore, String deadOwner) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update provisioning_run set lease_owner = ?, lease_heartbeat = ? where id = ? and (lease_owner is null or lease_owner = ?"
                        + " or lease_heartbeat < ? or lease_owner = ?)",
                owner, time(now), runId, owner, time(staleBefore), deadOwner == null ? "" : deadOwner) == 1);
    }

    boolean heartbeat(long runId, String owner, Instant now) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update provisioning_run set lease_heartbeat = ? where id = ? and lease_owner = ?", time(now), runId, owner) == 1);
    }

    void release(long runId, String owner) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update provisioning_run set lease_owner = null, lease_heartbeat = null where id = ? and lease_owner = ?", runId, owner));
    }

    void runStatus(long runId, String status, Instant now, boolean finished) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update provisioning_run set status = ?, updated_at = ?, finished_at = ? where id = ?", status, time(now),
                finished ? time(now) : null, runId));
    }

    /** A step starts on a machine: running, one more attempt. */
    void stepStarted(long runId, String machine, String step, Instant now) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "update provisioning_step set status = ?, attempts = attempts + 1, started_at = ?, finished_at = null where run_id = ? and machine = ? and step = ?",
                StepStatus.RUNNING.label(), time(now), runId, machine, step));
    }

    void stepStatus(long runId, String machine, String step, StepStatus status, String summary, Instant now) {
        stepStatus(runId, machine, step, status, summary, null, now);
    }

    /** The step waits for a person: its summary is the walkthrough as text, the walkthrough itself is kept for the console. */
    void stepWaiting(long runId, OperatorRequest request, Instant now) {
        stepStatus(runId, request.machine(), request.step(), StepStatus.WAITING_FOR_OPERATOR, request.text(), request, now);
    }

    private void stepStatus(long runId, String machine, String step, StepStatus status, String summary, OperatorRequest request, Instant now) {
        String requestJson = request == null ? null : json(request);
        Jdbc.inTransaction(dataSource, connection -> {
            Jdbc.update(connection, "update provisioning_step set status = ?, summary = ?, finished_at = ?, operator_request = ?"
                            + " where run_id = ? and machine = ? and step = ?",
                    status.label(), cap(summary), status == StepStatus.RUNNING || status == StepStatus.WAITING_FOR_OPERATOR ? null : time(now),
                    requestJson, runId, machine, step);
            return Jdbc.update(connection, "update provisioning_run set updated_at = ? where id = ?", time(now), runId);
        });
    }

    Optional<StepStatus> stepState(long runId, String machine, String step) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select status from provisioning_step where run_id = ? and machine = ? and step = ?", row -> StepStatus.fromLabel(row.getString(1)),
                runId, machine, step)).stream().findFirst();
    }

    void confirmation(long runId, String machine, String step, String actor, Instant at, boolean verified, String detail) {
        Jdbc.withConnection(dataSource, connection -> Jdbc.update(connection,
                "insert into provisioning_confirmation (run_id, machine, step, actor, confirmed_at, verified, detail) values (?, ?, ?, ?, ?, ?, ?)",
                runId, machine, step, actor, time(at), verified, cap(detail)));
    }

    /** Whether a person confirmed this step on this machine in any run (steps that cannot be verified over SSH). */
    boolean confirmedBefore(String machine, String step) {
        return Jdbc.withConnection(dataSource, connection -> !Jdbc.query(connection,
                "select id from provisioning_confirmation where machine = ? and step = ? fetch first 1 rows only", row -> row.getLong(1), machine, step).isEmpty());
    }

    List<RunView.Run> runs(int limit) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select * from provisioning_run order by id desc fetch first " + limit + " rows only", this::run));
    }

    Optional<RunView.Detail> detail(long runId) {
        return Jdbc.withConnection(dataSource, connection -> {
            List<RunView.Run> runs = Jdbc.query(connection, "select * from provisioning_run where id = ?", this::run, runId);
            if (runs.isEmpty()) {
                return Optional.empty();
            }
            RunView.Run run = runs.getFirst();
            List<RunView.Step> steps = steps(connection, runId);
            List<String> order = run.machines();
            steps = steps.stream().sorted(java.util.Comparator.comparingInt((RunView.Step step) -> order.indexOf(step.machine()))
                    .thenComparingInt(RunView.Step::position)).toList();
            List<RunView.Confirmation> confirmations = Jdbc.query(connection,
                    "select * from provisioning_confirmation where run_id = ? order by id", row -> new RunView.Confirmation(row.getString("machine"),
                            row.getString("step"), row.getString("actor"), instant(row, "confirmed_at"), row.getBoolean("verified"), row.getString("detail")), runId);
            return Optional.of(new RunView.Detail(run, steps, confirmations));
        });
    }

    private List<RunView.Step> steps(java.sql.Connection connection, long runId) throws SQLException {
        return Jdbc.query(connection, "select * from provisioning_step where run_id = ? order by machine, position", ProvisioningStore::step, runId);
    }

    private static RunView.Step step(ResultSet row) throws SQLException {
        return new RunView.Step(row.getString("machine"), row.getString("step"), row.getInt("position"), row.getString("status"),
                row.getInt("attempts"), instant(row, "started_at"), instant(row, "finished_at"), row.getString("summary"),
                operatorRequest(row.getString("operator_request")));
    }

    /**
     * Where every machine stands in the newest run that included it: that run's steps of the machine, keyed by
     * machine name. One query whatever the size of the fleet (the console's overview reads it on every refresh).
     */
    Map<String, RunView.MachineProgress> latestPerMachine() {
        return Jdbc.withConnection(dataSource, connection -> {
            Map<String, List<RunView.Step>> steps = new LinkedHashMap<>();
            Map<String, Long> runs = new LinkedHashMap<>();
            Map<String, String> playbooks = new LinkedHashMap<>();
            Map<String, Instant> updated = new LinkedHashMap<>();
            Jdbc.query(connection, "select s.*, r.playbook as run_playbook, r.updated_at as run_updated_at from provisioning_step s"
                    + " join provisioning_run r on r.id = s.run_id"
                    + " where s.run_id = (select max(t.run_id) from provisioning_step t where t.machine = s.machine)"
                    + " order by s.machine, s.position", row -> {
                        String machine = row.getString("machine");
                        steps.computeIfAbsent(machine, key -> new ArrayList<>()).add(step(row));
                        runs.put(machine, row.getLong("run_id"));
                        playbooks.put(machine, row.getString("run_playbook"));
                        updated.put(machine, instant(row, "run_updated_at"));
                        return machine;
                    });
            Map<String, RunView.MachineProgress> progress = new LinkedHashMap<>();
            steps.forEach((machine, mine) -> progress.put(machine, new RunView.MachineProgress(machine, runs.get(machine), playbooks.get(machine),
                    RunView.Detail.machineState(mine), mine, updated.get(machine))));
            return progress;
        });
    }

    /** The newest runs that included the machine, newest first. */
    List<RunView.Run> runsOf(String machine, int limit) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select * from provisioning_run where id in (select distinct run_id from provisioning_step where machine = ?)"
                        + " order by id desc fetch first " + limit + " rows only", this::run, machine));
    }

    private RunView.Run run(ResultSet row) throws SQLException {
        long id = row.getLong("id");
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (var entry : Jdbc.query(row.getStatement().getConnection(), "select status, count(*) from provisioning_step where run_id = ? group by status",
                r -> Map.entry(r.getString(1), r.getInt(2)), id)) {
            counts.put(entry.getKey(), entry.getValue());
        }
        String machines = row.getString("machines");
        return new RunView.Run(id, row.getString("playbook"), row.getString("playbook_hash"), row.getString("cluster"),
                machines.isEmpty() ? List.of() : Arrays.asList(machines.split(",")), map(row.getString("options")), row.getString("status"),
                row.getString("started_by"), instant(row, "created_at"), instant(row, "updated_at"), instant(row, "finished_at"),
                row.getString("lease_owner"), instant(row, "lease_heartbeat"), counts);
    }

    private static Instant instant(ResultSet row, String column) throws SQLException {
        OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }

    private static OffsetDateTime time(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }

    static String cap(String text) {
        if (text == null) {
            return null;
        }
        return text.length() <= SUMMARY_CAP ? text : text.substring(0, SUMMARY_CAP - 20) + "... (truncated)";
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The stored walkthrough; null when there is none or it cannot be read (then the step's summary still has it as text). */
    private static OperatorRequest operatorRequest(String json) {
        if (json == null) {
            return null;
        }
        try {
            return JSON.readValue(json, OperatorRequest.class);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(String json) {
        try {
            return JSON.readValue(json, Map.class);
        } catch (JsonProcessingException e) {
            return Map.of("unreadable", json);
        }
    }
}
