package io.macfleet.provision;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.Machine;
import io.macfleet.lease.LeaseOwners;
import io.macfleet.reach.MachineReach;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTransport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import javax.sql.DataSource;
import io.macfleet.config.MacfleetConfig;

/**
 * Provisioning: plans (dry runs), runs and resumes playbooks on machines of the applied inventory, keeps their state
 * in the database, and takes operator confirmations (from the CLI prompt or the console).
 */
@ApplicationScoped
public class ProvisioningService {

    /**
     * What to provision.
     *
     * @param cluster the cluster whose machines to provision, or null
     * @param machines machines by name (with a cluster: a subset of it), or empty
     * @param playbook a shipped playbook name, a name in the playbooks directory, or a file path; null for "provision"
     * @param only run just this step; from: start at this step (not both)
     * @param newRun start afresh even when an unfinished run of the same target exists
     */
    public record Request(String cluster, List<String> machines, String playbook, String only, String from, boolean newRun, Options options) {
        public Request {
            machines = machines == null ? List.of() : List.copyOf(machines);
            playbook = playbook == null || playbook.isBlank() ? "provision" : playbook;
            options = options == null ? Options.DEFAULTS : options;
        }

        public static Request cluster(String cluster) {
            return new Request(cluster, List.of(), null, null, null, false, null);
        }
    }

    /**
     * How to reach the machines.
     *
     * @param leaseTimeout how old a run's heartbeat must be before another process may take the run over
     */
    /**
     * @param serial machines per batch of a rolling run, 0 for all at once ({@code --serial})
     * @param maxFailPercent the share of a batch that may fail before later batches stop ({@code --max-fail-percent}, 100: never)
     */
    public record Options(int parallel, boolean acceptNewHostKeys, Duration connectTimeout, Duration commandTimeout, Duration leaseTimeout,
                          int serial, int maxFailPercent) {
        public static final Options DEFAULTS = new Options(32, false, Duration.ofSeconds(10), Duration.ofSeconds(60), Duration.ofSeconds(20));

        public Options {
            if (parallel < 1) {
                throw new IllegalArgumentException("--parallel must be at least 1");
            }
            if (serial < 0) {
                throw new IllegalArgumentException("--serial " + serial + " is negative; expected machines per batch, or 0 for all at once");
            }
            if (maxFailPercent < 0 || maxFailPercent > 100) {
                throw new IllegalArgumentException("--max-fail-percent " + maxFailPercent + " is out of range; expected 0 to 100");
            }
        }

        /** All machines at once, never stopping early. */
        public Options(int parallel, boolean acceptNewHostKeys, Duration connectTimeout, Duration commandTimeout, Duration leaseTimeout) {
            this(parallel, acceptNewHostKeys, connectTimeout, commandTimeout, leaseTimeout, 0, 100);
        }
    }

    /** Bad input: an unknown machine, cluster, playbook or step (400 in the API, exit 2 in the CLI). */
    public static final class InvalidRequestException extends RuntimeException implements io.macfleet.command.CommandFailure {
        @Override
        public Kind failureKind() {
            return Kind.USAGE;
        }

        public InvalidRequestException(String message) {
            super(message);
        }
    }

    /** The run is being worked on by another live process (409 in the API, exit 1 in the CLI). */
    public static final class RunBusyException extends RuntimeException implements io.macfleet.command.CommandFailure {
        @Override
        public Kind failureKind() {
            return Kind.CHECK_FAILED;
        }

        public RunBusyException(String message) {
            super(message);
        }
    }

    /** What a dry run found for one step on one machine: already-done, would-run, not-applicable, needs-operator, would-fail, unknown. */
    public record PlannedStep(String step, String type, String scope, String verdict, String detail) {
    }

    public record PlannedMachine(String machine, List<PlannedStep> steps) {
    }

    /** A dry run: what would run where, changing nothing (no facts stored, nothing audited, no run created). */
    public record Plan(String playbook, String source, Long wouldResumeRun, List<PlannedMachine> machines) {
    }

    /** The answer to a confirmation from the console: verified, or what is still wrong. */
    public record Confirmation(long runId, String machine, String step, boolean verified, String detail, boolean resumed) {
    }

    private final HostKeyStore hostKeys;
    private final FactsService facts;
    private final ClusterCabling cabling;
    private final ProvisioningStore store;
    private final AuditLog audit;
    private final Clock clock;
    private final Optional<Path> playbooksDirectory;
    private final StepTypes stepTypes;

    @Inject
    public ProvisioningService(ProvisioningStore store, JdbcAuditLog audit, JdbcHostKeyStore hostKeys, FactsService facts, ClusterCabling cabling,
                               StepTypes stepTypes, MacfleetConfig config) {
        this(store, audit, hostKeys, facts, cabling, stepTypes, config.playbooks().directory().map(Path::of).orElse(null), Clock.systemUTC());
    }

    /** Wired by hand (tests): the built-in step types. */
    public ProvisioningService(DataSource dataSource, FactsService facts, ClusterCabling cabling, Path playbooksDirectory, Clock clock) {
        this(dataSource, facts, cabling, StepTypes.builtIn(), playbooksDirectory, clock);
    }

    /** Wired by hand (tests and tools): every store on the one database. */
    public ProvisioningService(DataSource dataSource, FactsService facts, ClusterCabling cabling, StepTypes stepTypes, Path playbooksDirectory,
                               Clock clock) {
        this(new ProvisioningStore(dataSource), new JdbcAuditLog(dataSource), new JdbcHostKeyStore(dataSource), facts, cabling, stepTypes,
                playbooksDirectory, clock);
    }

    private ProvisioningService(ProvisioningStore store, AuditLog audit, HostKeyStore hostKeys, FactsService facts, ClusterCabling cabling,
                                StepTypes stepTypes, Path playbooksDirectory, Clock clock) {
        this.stepTypes = stepTypes;
        this.hostKeys = hostKeys;
        this.facts = facts;
        this.cabling = cabling;
        this.store = store;
        this.audit = audit;
        this.clock = clock;
        this.playbooksDirectory = Optional.ofNullable(playbooksDirectory).or(() -> Files.isDirectory(Path.of("playbooks")) ? Optional.of(Path.of("playbooks")) : Optional.empty());
    }

    public Playbook playbook(String nameOrPath) {
        return PlaybookLoader.resolve(nameOrPath, playbooksDirectory.orElse(null), stepTypes);
    }

    // ---- dry run

    /** What would run where; changes nothing: no run row, no stored facts, no audit entries. */
    public Plan plan(Request request) {
        Resolved resolved = resolve(request);
        Long resumable = request.newRun() ? null : store.latestUnfinished(resolved.targetKey()).filter(run -> run.playbookHash().equals(resolved.playbook().contentHash()))
                .map(RunView.Run::id).orElse(null);
        // Reads only, and nothing recorded: an audit log that keeps nothing, host keys never recorded.
        SshSettings settings = settings(request.options(), "dry-run").withAcceptNewHostKeys(false);
        SshTransport transport = new SshTransport(settings, readOnly(hostKeys), event -> { }, clock);
        List<PlannedMachine> planned = new ArrayList<>();
        try (SshRun run = transport.openRun()) {
            List<MachineContext> contexts = contexts(resolved, transport, run, true);
            Map<String, PlannedMachine> byMachine = new java.util.concurrent.ConcurrentHashMap<>();
            try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
                for (MachineContext context : contexts) {
                    threads.submit(() -> byMachine.put(context.machine(), planMachine(resolved, context)));
                }
            }
            for (MachineContext context : contexts) {
                planned.add(byMachine.get(context.machine()));
            }
        }
        return new Plan(resolved.playbook().name(), resolved.playbook().source(), resumable, planned);
    }

    private PlannedMachine planMachine(Resolved resolved, MachineContext context) {
        List<PlannedStep> steps = new ArrayList<>();
        boolean changes = false;
        for (PlaybookStep step : resolved.steps()) {
            context.beginStep(StepStatus.PENDING, () -> false, () -> store.confirmedBefore(context.machine(), step.name()), line -> { });
            String verdict;
            String detail;
            try {
                if (step.scope() == PlaybookStep.Scope.CLUSTER) {
                    String cluster = context.entry().cluster();
                    verdict = cluster == null ? "not-applicable" : "runs-after-all";
                    detail = cluster == null ? "belongs to no cluster" : "runs once every machine of " + cluster + " got here";
                } else if (step.when() != null && !step.when().holds(context.facts())) {
                    verdict = "not-applicable";
                    detail = step.when().describe() + " does not hold";
                } else {
                    StepPlan plan = step.definition().plan(context, changes);
                    verdict = plan.verdict();
                    detail = plan.detail();
                    changes |= plan.changes();
                }
            } catch (StepFailedException e) {
                verdict = "unknown";
                detail = e.getMessage();
            }
            steps.add(new PlannedStep(step.name(), step.type(), step.scope().label(), verdict, context.redact(detail)));
        }
        return new PlannedMachine(context.machine(), steps);
    }

    // ---- runs

    /**
     * Runs the playbook: continues the latest unfinished run of the same target (same playbook, cluster, machines,
     * --only/--from) unless {@code newRun} or the playbook changed since; else starts a new run. Blocks until every
     * machine is ready, failed or waiting for a person.
     *
     * @throws InvalidRequestException for unknown names or a broken playbook ({@link PlaybookLoader.InvalidPlaybookException})
     * @throws RunBusyException when another live process works on that run
     */
    public RunOutcome start(Request request, String actor, ProvisioningListener listener) {
        Resolved resolved = resolve(request);
        String owner = LeaseOwners.next();
        long runId;
        boolean resumed;
        Optional<RunView.Run> unfinished = request.newRun() ? Optional.empty() : store.latestUnfinished(resolved.targetKey());
        if (unfinished.isPresent() && !unfinished.get().playbookHash().equals(resolved.playbook().contentHash())) {
            listener.message("playbook " + resolved.playbook().name() + " changed since run " + unfinished.get().id() + ": starting a new run");
            unfinished = Optional.empty();
        }
        if (unfinished.isPresent()) {
            runId = unfinished.get().id();
            resumed = true;
            acquire(runId, unfinished.get(), owner, request.options().leaseTimeout());
        } else {
            Map<String, Object> options = new LinkedHashMap<>();
            options.put("playbookSource", resolved.playbook().source());
            options.put("only", request.only());
            options.put("from", request.from());
            options.put("parallel", request.options().parallel());
            options.put("leaseTimeoutSeconds", request.options().leaseTimeout().toSeconds());
            options.put("serial", request.options().serial());
            options.put("maxFailPercent", request.options().maxFailPercent());
            runId = store.createRun(resolved.playbook(), resolved.targetKey(), request.cluster(), resolved.machineNames(), options,
                    resolved.steps(), actor, clock.instant());
            resumed = false;
            if (!store.acquireLease(runId, owner, clock.instant(), clock.instant().minus(request.options().leaseTimeout()), null)) {
                throw new RunBusyException("run " + runId + " was taken by another process as it was created");
            }
            audit.record(new AuditEvent(clock.instant(), actor, null, "provision.run", "run " + runId + " started: playbook "
                    + resolved.playbook().name() + " on " + String.join(", ", resolved.machineNames()), AuditEvent.Outcome.SUCCESS));
        }
        return execute(runId, resumed, resolved, request.options(), actor, owner, listener);
    }

    /** Starts (or resumes) a run on a background thread, for the REST API; operator steps wait for the console. */
    public long startInBackground(Request request, String actor) {
        Resolved resolved = resolve(request);
        java.util.concurrent.CompletableFuture<Long> started = new java.util.concurrent.CompletableFuture<>();
        Thread.ofVirtual().name("provision-" + actor).start(() -> {
            try {
                start(request, actor, new ProvisioningListener() {
                    @Override
                    public void runStarted(long runId, boolean resumed, String playbook, List<String> machines) {
                        started.complete(runId);
                    }
                });
            } catch (RuntimeException e) {
                started.completeExceptionally(e);
            }
        });
        try {
            return started.get();
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting run of " + resolved.playbook().name(), e);
        }
    }

    public List<RunView.Run> runs(int limit) {
        if (limit < 1 || limit > 1000) {
            throw new InvalidRequestException("limit must be 1..1000, was " + limit);
        }
        return store.runs(limit).stream().map(this::shown).toList();
    }

    public Optional<RunView.Detail> run(long id) {
        return store.detail(id).map(detail -> new RunView.Detail(shown(detail.run()), detail.steps(), detail.confirmations()));
    }

    /**
     * The run as people see it: a run stored as "running" whose process no longer works on it (stopped with Ctrl-C,
     * killed, its machine gone: no live lease) is shown as "interrupted", with {@code macfleet provision} resuming it.
     * The stored status stays "running", which is what resuming looks for.
     */
    private RunView.Run shown(RunView.Run run) {
        if (RunState.fromLabel(run.status()) != RunState.RUNNING) {
            return run;
        }
        Object stored = run.options().get("leaseTimeoutSeconds");
        Duration leaseTimeout = stored instanceof Number seconds ? Duration.ofSeconds(seconds.longValue()) : Options.DEFAULTS.leaseTimeout();
        return leaseLive(run, leaseTimeout) ? run : run.withStatus(RunState.INTERRUPTED.label());
    }

    /** Where every machine stands in the newest run that included it, by machine name (machines never provisioned are absent). */
    public Map<String, RunView.MachineProgress> latestPerMachine() {
        return store.latestPerMachine();
    }

    /** The newest runs that included the machine, newest first. */
    public List<RunView.Run> runsOf(String machine, int limit) {
        if (limit < 1 || limit > 1000) {
            throw new InvalidRequestException("limit must be 1..1000, was " + limit);
        }
        return store.runsOf(machine, limit).stream().map(this::shown).toList();
    }

    /** The names of the shipped playbooks and those in the playbooks directory, sorted. */
    public List<String> playbookNames() {
        return PlaybookLoader.names(playbooksDirectory.orElse(null));
    }

    /**
     * A person says the operator step is done on the machine (the console's "done, verify now"): records who and
     * when, verifies over SSH now (a fresh connection), and when verified marks the step done and, if no live process
     * works on the run, continues the run here in the background.
     *
     * @throws InvalidRequestException for an unknown run, machine or step, or a step that is not waiting for a person
     */
    public Confirmation confirmOperatorStep(long runId, String machine, String step, String actor) {
        RunView.Detail detail = store.detail(runId).orElseThrow(() -> new NotFoundException("no provisioning run " + runId));
        RunView.Step state = detail.steps().stream().filter(s -> s.machine().equals(machine) && s.step().equals(step)).findFirst()
                .orElseThrow(() -> new NotFoundException("run " + runId + " has no step '" + step + "' on machine '" + machine + "'"));
        if (!state.status().equals(StepStatus.WAITING_FOR_OPERATOR.label())) {
            throw new InvalidRequestException("step " + step + " on " + machine + " in run " + runId + " is " + state.status()
                    + ", not waiting-for-operator");
        }
        Playbook playbook = playbookOf(detail.run());
        PlaybookStep playbookStep = playbook.step(step).orElseThrow(() -> new InvalidRequestException("the playbook no longer has step " + step));
        OperatorWalkthrough operator = playbookStep.definition().walkthrough().orElse(null);
        if (operator == null) {
            throw new InvalidRequestException("step " + step + " is not an operator step");
        }
        Machine entry = facts.machine(machine).orElseThrow(() -> new InvalidRequestException("machine " + machine + " is no longer in the applied inventory"));
        SshSettings settings = settings(Options.DEFAULTS, actor);
        SshTransport transport = new SshTransport(settings, hostKeys, audit, clock);
        CheckResult verified;
        try (SshRun run = transport.openRun()) {
            MachineContext context = context(entry, transport, run, false);
            context.beginStep(StepStatus.WAITING_FOR_OPERATOR, () -> false, () -> true, line -> { });
            try {
                verified = !operator.verifiable() ? CheckResult.satisfied("confirmed (nothing to verify over SSH)")
                        : operator.verify(context, true);
            } catch (StepFailedException e) {
                // The machine did not answer (off, still in Recovery, hung): not verified, and why, in words.
                verified = new CheckResult(false, "could not verify on " + machine + ": " + e.getMessage());
            }
            verified = new CheckResult(verified.satisfied(), context.redact(verified.detail()), context.redact(verified.plain()));
        }
        Instant now = clock.instant();
        // The person who confirmed reads the plain words (no patterns, no raw output); the audit keeps the details.
        store.confirmation(runId, machine, step, actor, now, verified.satisfied(), spokenFor(machine, verified.plain()));
        audit.record(new AuditEvent(now, actor, machine, "provision.operator.confirm", "run " + runId + " step " + step + ": "
                + (verified.satisfied() ? "verified: " : "verification failed: ") + ProvisioningStore.cap(verified.detail()),
                verified.satisfied() ? AuditEvent.Outcome.SUCCESS : AuditEvent.Outcome.FAILURE));
        if (!verified.satisfied()) {
            return new Confirmation(runId, machine, step, false, spokenFor(machine, verified.plain()), false);
        }
        store.stepStatus(runId, machine, step, StepStatus.DONE, "confirmed by " + actor + ", verified: " + verified.detail(), now);
        boolean resumed = false;
        RunView.Run run = store.detail(runId).orElseThrow().run();
        if (!leaseLive(run, Options.DEFAULTS.leaseTimeout())) {
            Request request = new Request(run.cluster(), run.machines(), String.valueOf(run.options().getOrDefault("playbookSource", run.playbook())),
                    (String) run.options().get("only"), (String) run.options().get("from"), false, Options.DEFAULTS);
            try {
                startInBackground(request, actor);
                resumed = true;
            } catch (RuntimeException e) {
                // The confirmation stands; the run is continued by whoever runs it next.
            }
        }
        return new Confirmation(runId, machine, step, true, verified.detail(), resumed);
    }

    /** A check's plain words name the Mac they are about, as the console and the API show them beside other Macs. */
    private static String spokenFor(String machine, String plain) {
        return plain.contains(machine) ? plain : machine + ": " + plain;
    }

    /** An unknown run, machine or step (404 in the API). */
    public static final class NotFoundException extends RuntimeException {
        public NotFoundException(String message) {
            super(message);
        }
    }

    // ---- internals

    /** Past this many characters of machine names, a run's target key holds their SHA-256 (the column is indexed and bounded). */
    private static final int TARGET_KEY_NAMES = 1000;

    private record Resolved(Playbook playbook, List<PlaybookStep> steps, List<Machine> machines, String targetKey) {
        List<String> machineNames() {
            return machines.stream().map(Machine::name).toList();
        }
    }

    private Resolved resolve(Request request) {
        Playbook playbook = playbook(request.playbook());
        List<PlaybookStep> steps;
        try {
            steps = playbook.select(request.only(), request.from());
        } catch (IllegalArgumentException e) {
            throw new InvalidRequestException(e.getMessage());
        }
        List<Machine> machines = select(request.cluster(), request.machines());
        if (machines.isEmpty()) {
            throw new InvalidRequestException("no machines to provision" + (request.cluster() == null ? "" : " in cluster " + request.cluster()));
        }
        String names = String.join(",", new TreeSet<>(machines.stream().map(Machine::name).toList()));
        String key = playbook.name() + "|" + Optional.ofNullable(request.cluster()).orElse("") + "|"
                + (names.length() <= TARGET_KEY_NAMES ? names : "sha256:" + PlaybookLoader.sha256(names)) + "|"
                + Optional.ofNullable(request.only()).orElse("") + "|" + Optional.ofNullable(request.from()).orElse("");
        return new Resolved(playbook, steps, machines, key);
    }

    private List<Machine> select(String cluster, List<String> names) {
        try {
            if (cluster == null && names.isEmpty()) {
                throw new InvalidRequestException("name a cluster or at least one --machine");
            }
            if (cluster == null) {
                return facts.select(null, names);
            }
            List<Machine> members = facts.select(cluster, List.of());
            if (names.isEmpty()) {
                return members;
            }
            List<Machine> chosen = new ArrayList<>();
            for (String name : new LinkedHashSet<>(names)) {
                chosen.add(members.stream().filter(m -> name.equals(m.name())).findFirst().orElseThrow(() ->
                        new InvalidRequestException("machine " + name + " is not in cluster " + cluster)));
            }
            return chosen;
        } catch (FactsService.UnknownNameException | IllegalArgumentException e) {
            throw new InvalidRequestException(e.getMessage());
        }
    }

    private RunOutcome execute(long runId, boolean resumed, Resolved resolved, Options options, String actor, String owner, ProvisioningListener listener) {
        SshSettings settings = settings(options, actor);
        SshTransport transport = new SshTransport(settings, hostKeys, audit, clock);
        try (SshRun run = transport.openRun()) {
            List<RunExecutor.Target> targets = new ArrayList<>();
            for (MachineContext context : contexts(resolved, transport, run, false)) {
                targets.add(new RunExecutor.Target(context, context.entry().cluster()));
            }
            RunExecutor executor = new RunExecutor(store, facts, cabling, audit, clock, actor, owner, options.leaseTimeout(), options.parallel())
                    .rolling(options.serial(), options.maxFailPercent());
            return executor.execute(runId, resumed, resolved.playbook(), resolved.steps(), targets, listener);
        } finally {
            store.release(runId, owner);
        }
    }

    private List<MachineContext> contexts(Resolved resolved, SshTransport transport, SshRun run, boolean dryRun) {
        List<MachineContext> contexts = new ArrayList<>();
        for (Machine entry : resolved.machines()) {
            contexts.add(context(entry, transport, run, dryRun));
        }
        return contexts;
    }

    private MachineContext context(Machine entry, SshTransport transport, SshRun run, boolean dryRun) {
        Cluster cluster = entry.cluster() == null ? null : facts.cluster(entry.cluster()).orElse(null);
        List<String> clusterMachines = cluster == null ? List.of() : facts.select(cluster.name(), List.of()).stream().map(Machine::name).toList();
        try {
            return new MachineContext(entry.name(), entry, cluster, clusterMachines, MachineReach.of(entry).ssh(), transport, run, facts, dryRun,
                    transport.settings().environment(), clock);
        } catch (IllegalArgumentException e) {
            throw new InvalidRequestException(e.getMessage());
        }
    }

    private void acquire(long runId, RunView.Run run, String owner, Duration leaseTimeout) {
        Instant now = clock.instant();
        String dead = deadOwner(run.leaseOwner());
        if (!store.acquireLease(runId, owner, now, now.minus(leaseTimeout), dead)) {
            RunView.Run current = store.detail(runId).orElseThrow().run();
            throw new RunBusyException("run " + runId + " is being worked on by another live process (" + current.leaseOwner()
                    + ", last heartbeat " + (current.leaseHeartbeat() == null ? "unknown" : Duration.between(current.leaseHeartbeat(), now).toSeconds() + " s ago")
                    + "); wait for it, or for its lease to expire (" + leaseTimeout.toSeconds() + " s without a heartbeat)");
        }
    }

    /** The lease owner if it is a process of this host that no longer exists: its run can be taken over at once. */
    private static String deadOwner(String leaseOwner) {
        return LeaseOwners.isDeadProcessOfThisHost(leaseOwner) ? leaseOwner : null;
    }

    private boolean leaseLive(RunView.Run run, Duration leaseTimeout) {
        return run.leaseOwner() != null && run.leaseHeartbeat() != null
                && run.leaseHeartbeat().isAfter(clock.instant().minus(leaseTimeout)) && deadOwner(run.leaseOwner()) == null;
    }

    private Playbook playbookOf(RunView.Run run) {
        Object source = run.options().get("playbookSource");
        Playbook playbook;
        try {
            playbook = source != null && Files.isRegularFile(Path.of(source.toString())) ? PlaybookLoader.load(Path.of(source.toString()), stepTypes) : playbook(run.playbook());
        } catch (PlaybookLoader.InvalidPlaybookException e) {
            playbook = playbook(run.playbook());
        }
        return playbook;
    }

    private static SshSettings settings(Options options, String actor) {
        SshSettings defaults = SshSettings.defaults(actor);
        return defaults.withParallelism(options.parallel()).withAcceptNewHostKeys(options.acceptNewHostKeys())
                .withLimits(new ExecutionLimits(options.connectTimeout(), options.commandTimeout(), ExecutionLimits.DEFAULTS.maxOutputBytes()));
    }

    /** Host keys looked up but never recorded (dry runs change nothing). */
    private static HostKeyStore readOnly(HostKeyStore keys) {
        return new HostKeyStore() {
            @Override
            public Optional<io.macfleet.ssh.StoredHostKey> find(String machine) {
                return keys.find(machine);
            }

            @Override
            public boolean recordIfAbsent(io.macfleet.ssh.StoredHostKey key) {
                // A dry run never records.
                return false;
            }

            @Override
            public boolean forget(String machine) {
                return false;
            }
        };
    }
}
