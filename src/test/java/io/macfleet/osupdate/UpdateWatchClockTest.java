package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.SshSettings;
import io.macfleet.mdm.OsUpdateTarget;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The UPDATING step on a clock the test drives: each poll advances it by the poll interval instead of sleeping, so
 * deadlines of minutes pass in milliseconds and the moment a Mac fails is exact. The Macs are an honest fake
 * {@link UpdateMethod} whose reports follow the same clock; the campaign's rows are in a real H2 database.
 */
class UpdateWatchClockTest {
    private static final Instant START = Instant.parse("2026-11-28T10:00:00Z");
    private static final Duration SLOT = Duration.ofMinutes(10);
    private static final Duration POLL = Duration.ofMinutes(1);
    private static final OsUpdateTarget TARGET = new OsUpdateTarget("26.2", Optional.of("25C56"), LocalDateTime.of(2026, 11, 28, 10, 0));
    private static final String CLUSTER = "llm-a";

    private AgroalDataSource dataSource;
    private final ManualClock clock = new ManualClock(START);
    private final Map<String, Boolean> answersOverSsh = new ConcurrentHashMap<>();
    private CampaignContext context;
    private CampaignStore store;

    @BeforeEach
    void database() {
        dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:update-watch-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null));
        store = new CampaignStore(dataSource);
        JdbcAuditLog audit = new JdbcAuditLog(dataSource);
        OsUpdateCampaigns.Options options = new OsUpdateCampaigns.Options(io.macfleet.ssh.SshSettings.defaults("test"), POLL, PhaseDeadlines.all(SLOT),
                Duration.ofSeconds(60));
        context = new CampaignContext(store, new CampaignStateMachine(store, audit, clock), audit, null, null, null, null, options, clock,
                StepBoundary.NONE, clock::advance, (machine, actor) -> answersOverSsh.getOrDefault(machine.name(), true));
    }

    @AfterEach
    void close() {
        dataSource.close();
    }

    @Test
    void eachPhaseHasItsOwnSlotAndAMacThatNeverComesBackFailsOnceItsRestartSlotIsOver() {
        // studio-01 spends 9 of its 10 minutes in each of five phases (45 minutes in all) and finishes; studio-02
        // reaches restarting after 8 minutes and never answers again; studio-03 never starts the update.
        FakeMethod method = new FakeMethod(Map.of(
                "studio-01", elapsed -> phases(elapsed, Duration.ofMinutes(9), false),
                "studio-02", elapsed -> phases(elapsed, Duration.ofMinutes(2), true),
                "studio-03", elapsed -> new UpdateProgress(UpdateProgress.Phase.WAITING, Optional.empty(), Optional.empty(), Optional.empty(),
                        "install-state idle")));
        answersOverSsh.put("studio-02", false);
        long id = campaignAtUpdating(List.of("studio-01", "studio-02", "studio-03"));

        WaveExecutor.Outcome outcome = new UpdateWatch(context).update(id, CLUSTER, machines(List.of("studio-01", "studio-02", "studio-03")), TARGET, method,
                "test", "owner");

        assertThat(outcome).isEqualTo(WaveExecutor.Outcome.FAILED);
        assertThat(store.clusterSteps(id)).containsEntry(CLUSTER, ClusterStep.FAILED);
        assertThat(store.failedStep(id, CLUSTER)).contains(ClusterStep.UPDATING);
        Map<String, CampaignView.MachineView> machines = machinesOf(id);

        assertThat(machines.get("studio-01").phase()).isEqualTo("done");
        assertThat(machines.get("studio-01").buildVersion()).contains("25C56");
        assertThat(machines.get("studio-01").phaseSince()).isEqualTo(START.plus(Duration.ofMinutes(45)));

        // Restarting since minute 8 (its first report of it), failed at the first look after 8 + 10 minutes: minute 19.
        CampaignView.MachineView lost = machines.get("studio-02");
        assertThat(lost.phase()).isEqualTo("failed");
        assertThat(lost.detail().orElseThrow()).startsWith("stayed 'restarting' longer than 10 min")
                .endsWith("; it does not answer over SSH: it is probably off or asleep");
        assertThat(lost.fix().orElseThrow()).startsWith("power studio-02 on");
        assertThat(lost.phaseSince()).isEqualTo(START.plus(Duration.ofMinutes(19)));

        // Waiting since the send at minute 0, failed at minute 11; it answers over SSH, so the fix is Software Update's log.
        CampaignView.MachineView idle = machines.get("studio-03");
        assertThat(idle.phase()).isEqualTo("failed");
        assertThat(idle.detail().orElseThrow()).isEqualTo("did not start the update within 10 min of it being sent (last seen: install-state idle)");
        assertThat(idle.fix().orElseThrow()).contains("softwareupdated");
        assertThat(idle.phaseSince()).isEqualTo(START.plus(Duration.ofMinutes(11)));

        // The watch waited only on the clock: one poll interval after each look, the last one when studio-01 was done.
        assertThat(clock.instant()).isEqualTo(START.plus(Duration.ofMinutes(46)));
        assertThat(method.started).containsOnlyKeys("studio-01", "studio-02", "studio-03");
    }

    @Test
    void aMachineAlreadySentIsNotSentAgainAndAPausedCampaignStopsWithoutWaiting() {
        FakeMethod method = new FakeMethod(Map.of("studio-01", elapsed -> phases(elapsed, Duration.ofMinutes(1), true)));
        long id = campaignAtUpdating(List.of("studio-01"));
        context.states().start(id, "studio-01", StartState.SENDING);
        context.states().sent(id, "studio-01", List.of());
        context.states().campaign(id, CampaignStatus.RUNNING, CampaignStatus.PAUSED);

        WaveExecutor.Outcome outcome = new UpdateWatch(context).update(id, CLUSTER, machines(List.of("studio-01")), TARGET, method, "test", "owner");

        assertThat(outcome).isEqualTo(WaveExecutor.Outcome.PAUSED);
        assertThat(method.started).isEmpty();
        assertThat(clock.instant()).isEqualTo(START);
        assertThat(store.clusterSteps(id)).containsEntry(CLUSTER, ClusterStep.UPDATING);
    }

    /** Stores a campaign of the machines and moves its cluster through the table to UPDATING, each machine CHECKED. */
    private long campaignAtUpdating(List<String> names) {
        long id = store.create(TARGET, "fake", OsUpdateCampaigns.DEFAULT_SERVICE_LABEL, 1, false, Map.of(CLUSTER, names), "test", clock.instant());
        CampaignStateMachine states = context.states();
        states.cluster(id, CLUSTER, ClusterStep.PREFLIGHT);
        names.forEach(name -> states.machine(id, name, MachinePhase.CHECKED, "preflight passed"));
        states.cluster(id, CLUSTER, ClusterStep.DRAINING);
        states.cluster(id, CLUSTER, ClusterStep.UPDATING);
        return id;
    }

    /** The phases in order, {@code each} long; then done, or (lost) restarting and nothing readable ever after. */
    private static UpdateProgress phases(Duration elapsed, Duration each, boolean lost) {
        List<UpdateProgress.Phase> order = List.of(UpdateProgress.Phase.WAITING, UpdateProgress.Phase.DOWNLOADING, UpdateProgress.Phase.PREPARED,
                UpdateProgress.Phase.INSTALLING, UpdateProgress.Phase.RESTARTING);
        int index = (int) (elapsed.toMillis() / each.toMillis());
        if (index < order.size() - 1 || (index == order.size() - 1 && !lost)) {
            return new UpdateProgress(order.get(index), Optional.of("26.1"), Optional.of("25B78"), Optional.empty(), order.get(index).wire());
        }
        if (lost) {
            return index == order.size() - 1 ? new UpdateProgress(UpdateProgress.Phase.RESTARTING, Optional.empty(), Optional.empty(), Optional.empty(),
                    "restarting") : UpdateProgress.unknown("not reachable");
        }
        return new UpdateProgress(UpdateProgress.Phase.DONE, Optional.of("26.2"), Optional.of("25C56"), Optional.empty(), "on 26.2 (25C56)");
    }

    private Map<String, Machine> machines(List<String> names) {
        Map<String, Machine> machines = new LinkedHashMap<>();
        for (String name : names) {
            machines.put(name, new Machine(name, "192.0.2.1", new SshSettings(SshSettings.DEFAULT_USER, SshSettings.DEFAULT_PORT, null, null, null),
                    "SERIAL-" + name, "Mac15,14", 512, Machine.Role.WORKER, CLUSTER, List.of(), null, null, Map.of()));
        }
        return machines;
    }

    private Map<String, CampaignView.MachineView> machinesOf(long id) {
        return store.view(id).orElseThrow().clusters().getFirst().machines().stream()
                .collect(Collectors.toMap(CampaignView.MachineView::machine, Function.identity()));
    }

    /** Macs whose reports are a function of the time since their update was started, on the test's clock. */
    private final class FakeMethod implements UpdateMethod {
        final Map<String, Instant> started = new ConcurrentHashMap<>();
        private final Map<String, Function<Duration, UpdateProgress>> reports;

        FakeMethod(Map<String, Function<Duration, UpdateProgress>> reports) {
            this.reports = reports;
        }

        @Override
        public String name() {
            return "fake";
        }

        @Override
        public PreflightResult preflight(Machine machine, OsUpdateTarget target) {
            throw new AssertionError("the update step runs no preflight");
        }

        @Override
        public StartResult start(Machine machine, OsUpdateTarget target) {
            started.put(machine.name(), clock.instant());
            return StartResult.started(machine.name(), List.of(new StartResult.Action("command", "start " + machine.name(), true)));
        }

        @Override
        public UpdateProgress progress(Machine machine, OsUpdateTarget target) {
            return reports.get(machine.name()).apply(Duration.between(started.get(machine.name()), clock.instant()));
        }
    }

    /** A clock that moves only when the engine pauses between two looks. */
    static final class ManualClock extends Clock {
        private volatile Instant now;

        ManualClock(Instant start) {
            this.now = start;
        }

        void advance(Duration duration) {
            now = now.plus(duration);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }
}
