package io.macfleet.provision;

import io.macfleet.facts.FactsGatherer;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.MachineFacts;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.InventoryDocuments;
import io.macfleet.inventory.Machine;
import io.macfleet.secrets.SecretReference;
import io.macfleet.secrets.SecretUnavailableException;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshException;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What a step sees of one machine during a run: its inventory entry, its SSH connection (shared by the run's
 * steps) or fresh connections for polling, its facts, and whether anything changed on it in this run.
 */
public final class MachineContext {

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper().findAndRegisterModules();

    private final String machine;
    private final Machine entry;
    private final Cluster cluster;
    private final List<String> clusterMachines;
    private final SshTarget target;
    private final SshTransport transport;
    private final SshRun run;
    private final FactsService factsService;
    private final boolean dryRun;
    private final Map<String, String> environment;
    private final Set<String> secrets;
    private final Clock clock;
    private volatile MachineFacts facts;
    private volatile Supplier<Boolean> changedInThisRun = () -> false;
    private volatile StepStatus previousStatus;
    private volatile Consumer<String> progress = line -> { };
    private volatile Supplier<Boolean> operatorConfirmedBefore = () -> false;

    /**
     * @param cluster the machine's cluster, or null when it is in none
     * @param clusterMachines the names of the cluster's machines ({@code {{ cluster.machines }}})
     */
    MachineContext(String machine, Machine entry, Cluster cluster, List<String> clusterMachines, SshTarget target, SshTransport transport,
                   SshRun run, FactsService factsService, boolean dryRun, Map<String, String> environment, Clock clock) {
        this.machine = machine;
        this.entry = entry;
        this.cluster = cluster;
        this.clusterMachines = List.copyOf(clusterMachines);
        this.target = target;
        this.transport = transport;
        this.run = run;
        this.factsService = factsService;
        this.dryRun = dryRun;
        this.environment = environment;
        this.secrets = ConcurrentHashMap.newKeySet();
        this.clock = clock;
    }

    public String machine() {
        return machine;
    }

    Machine entry() {
        return entry;
    }

    Cluster cluster() {
        return cluster;
    }

    SshTarget target() {
        return target;
    }

    /** The fleet's stored facts (steps that read their cluster's checked cabling build it from these). */
    FactsService factsService() {
        return factsService;
    }

    public boolean dryRun() {
        return dryRun;
    }

    /** The run's SSH settings (actor, limits, host key policy), for steps that open connections of their own. */
    public io.macfleet.ssh.SshSettings sshSettings() {
        return transport.settings();
    }

    Clock clock() {
        return clock;
    }

    void beginStep(StepStatus previous, Supplier<Boolean> changed, Supplier<Boolean> confirmedBefore, Consumer<String> progressLine) {
        this.previousStatus = previous;
        this.operatorConfirmedBefore = confirmedBefore;
        this.changedInThisRun = changed;
        this.progress = progressLine;
    }

    StepStatus previousStatus() {
        return previousStatus;
    }

    boolean operatorConfirmedBefore() {
        return operatorConfirmedBefore.get();
    }

    boolean changedInThisRun() {
        return changedInThisRun.get();
    }

    public void progress(String line) {
        progress.accept(line);
    }

    /**
     * Runs a command. {@code fresh}: on a connection of its own, closed right after (for polling a machine that
     * reboots or sits in Recovery: nothing is held open). SSH failures become a {@link StepFailedException}.
     */
    public CommandResult execute(CommandSpec spec, boolean reading, boolean fresh) {
        Command command = spec.build(variables(Map.of()), reading);
        io.macfleet.ssh.ExecutionLimits limits = transport.settings().limits();
        if (spec.timeoutSeconds() != null) {
            limits = limits.withCommandTimeout(Duration.ofSeconds(spec.timeoutSeconds()));
        }
        try {
            if (fresh) {
                try (SshRun once = transport.openRun()) {
                    return once.execute(target, command, limits);
                }
            }
            return run.execute(target, command, limits);
        } catch (SshException e) {
            throw new StepFailedException(redact(e.getMessage()), e);
        }
    }

    /** Whether the machine answers SSH now, on a fresh connection. */
    boolean answers() {
        try (SshRun once = transport.openRun()) {
            once.execute(target, Command.reading("true"), transport.settings().limits().withCommandTimeout(Duration.ofSeconds(10)));
            return true;
        } catch (SshException e) {
            return false;
        }
    }

    public void upload(String path, byte[] content, int mode) {
        try {
            run.upload(target, path, content, mode);
        } catch (SshException e) {
            throw new StepFailedException(e.getMessage(), e);
        }
    }

    /** The machine's facts: gathered in this run, else gathered now (stored unless this is a dry run). */
    public MachineFacts facts() {
        MachineFacts known = facts;
        return known != null ? known : gatherFacts();
    }

    MachineFacts gatherFacts() {
        return gatherObservation().facts();
    }

    /** Gathers facts now with the command output they came from; stored unless this is a dry run. */
    FactsObservation gatherObservation() {
        FactsObservation observation;
        if (dryRun) {
            MachineResult<FactsObservation> result = new FactsGatherer(clock).gather(run, List.of(target)).getFirst();
            if (!result.succeeded()) {
                throw new StepFailedException("facts: " + result.describe());
            }
            observation = result.value();
        } else {
            MachineResult<MachineFacts> result = factsService.gather(List.of(entry), transport.settings()).results().getFirst();
            if (!result.succeeded()) {
                throw new StepFailedException("facts: " + result.describe());
            }
            observation = factsService.latest(machine).orElseThrow(() -> new StepFailedException("facts of " + machine + " were not stored"));
        }
        facts = observation.facts();
        return observation;
    }

    void forgetFacts() {
        facts = null;
    }

    Templates.Variables variables(Map<String, Object> vars) {
        return new Templates.Variables() {
            @Override
            public Object lookup(List<String> path) {
                List<String> rest = path.subList(1, path.size());
                Object root = switch (path.getFirst()) {
                    case "machine" -> InventoryDocuments.lookup(entry, rest);
                    case "cluster" -> cluster == null ? null : InventoryDocuments.lookup(cluster, clusterMachines, rest);
                    case "facts" -> JSON.convertValue(facts(), Map.class);
                    case "vars" -> vars;
                    default -> null;
                };
                if (path.getFirst().equals("machine") || path.getFirst().equals("cluster")) {
                    return root;
                }
                Object value = root;
                for (String key : rest) {
                    value = value instanceof Map<?, ?> map ? map.get(key) : null;
                }
                return value;
            }

            @Override
            public String resolveSecret(String reference) {
                SecretReference parsed = SecretReference.parse(reference).orElseThrow(() -> new StepFailedException(
                        "a {{ secret ... }} placeholder of " + machine + " does not hold a secret reference (env:NAME or file:PATH)"));
                try {
                    String value = parsed.resolve(environment).replaceFirst("\\R\\z", "");
                    secrets.add(value);
                    return value;
                } catch (SecretUnavailableException e) {
                    throw new StepFailedException(machine + ": secret " + parsed + " unavailable: " + e.getMessage(), e);
                }
            }
        };
    }

    /** The text with every secret used on this machine replaced, for summaries and messages. */
    public String redact(String text) {
        if (text == null) {
            return null;
        }
        String redacted = text;
        for (String secret : new ArrayList<>(secrets)) {
            if (!secret.isEmpty()) {
                redacted = redacted.replace(secret, "<redacted>");
            }
        }
        return redacted;
    }

    /** Sleeps, unless the run is being stopped. */
    static void pause(Duration duration) {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StepFailedException("interrupted");
        }
    }
}
