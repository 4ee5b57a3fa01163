package io.macfleet.runtime;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.PeerConfiguration;
import io.macfleet.deployment.LaunchdService;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.NodeService;
import io.macfleet.deployment.RankTarget;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InferenceSettings;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTransport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The runtimes of the applied inventory's clusters: which runtime a cluster runs, its plan, deployment (for every
 * runtime but the bundled node, whose deployment stays {@link NodeService#deploy}), its daemons' state and its
 * endpoint. The CLI, the REST API and the console come through here.
 */
@ApplicationScoped
public class RuntimeService {

    private final DesiredStateStore desiredState;
    private final NodeService nodes;
    private final ClusterCabling cabling;
    private final FactsService facts;
    private final HostKeyStore hostKeys;
    private final AuditLog audit;
    private final Clock clock;
    private final InferenceRuntimes runtimes;
    private volatile Duration readyTimeout = Duration.ofSeconds(300);

    @Inject
    public RuntimeService(DesiredStateStore desiredState, NodeService nodes, ClusterCabling cabling, FactsService facts, JdbcHostKeyStore hostKeys,
                          JdbcAuditLog audit, Instance<InferenceRuntime> extraRuntimes) {
        this(desiredState, nodes, cabling, facts, hostKeys, audit, Clock.systemUTC(), withExtras(extraRuntimes));
    }

    public RuntimeService(DesiredStateStore desiredState, NodeService nodes, ClusterCabling cabling, FactsService facts, HostKeyStore hostKeys,
                          AuditLog audit, Clock clock, InferenceRuntimes runtimes) {
        this.desiredState = desiredState;
        this.nodes = nodes;
        this.cabling = cabling;
        this.facts = facts;
        this.hostKeys = hostKeys;
        this.audit = audit;
        this.clock = clock;
        this.runtimes = runtimes;
    }

    /** The built-in runtimes and any runtime bean of the application (a test's, in test code). */
    private static InferenceRuntimes withExtras(Instance<InferenceRuntime> extras) {
        InferenceRuntimes all = InferenceRuntimes.standard();
        for (InferenceRuntime runtime : extras) {
            if (all.find(runtime.name()).isEmpty()) {
                all = all.with(runtime);
            }
        }
        return all;
    }

    public InferenceRuntimes runtimes() {
        return runtimes;
    }

    /** The runtime a cluster of the applied inventory names. */
    public InferenceRuntime runtimeOf(String clusterName) {
        return runtimes.get(inference(clusterName).runtime());
    }

    /** The model catalogue; absent in services built by hand (tests), where models are paths. */
    private volatile io.macfleet.models.ModelCatalogue catalogue;

    @Inject
    void useCatalogue(io.macfleet.models.ModelCatalogue catalogue) {
        this.catalogue = catalogue;
    }

    /** A catalogue name's weights on this host (the GGUF file, or the MLX directory); empty for a path. */
    private Optional<Path> named(String model) {
        return catalogue == null ? Optional.empty() : catalogue.resolve(model);
    }

    /** The cluster as a runtime plans from it: machines in rank order with memory and Thunderbolt addresses. */
    public RuntimeCluster cluster(String clusterName, Optional<Path> model, Optional<Path> nodeJar) {
        Cluster cluster = desiredState.cluster(clusterName).orElseThrow(() -> new RuntimeRefused(
                "no cluster named '" + clusterName + "' in the applied inventory (macfleet inventory apply DIR first)"));
        List<RankTarget> ranks = nodes.ranks(clusterName);
        Map<String, FactsObservation> observations = facts.latest(ranks.stream().map(RankTarget::machine).toList());
        List<PeerConfiguration.PeerLink> links = List.of();
        List<PeerConfiguration.PeerLink> configured = List.of();
        Optional<ClusterCabling.Cluster> cablingFacts = Optional.empty();
        try {
            ClusterCabling.Cluster observed = cabling.cluster(clusterName, Optional.empty());
            cablingFacts = Optional.of(observed);
            links = PeerConfiguration.from(observed.check(), observed.facts()).links();
            configured = NodeService.configuredLinks(links, observations);
        } catch (RuntimeException noCablingFacts) {
            // No stored facts: no Thunderbolt addresses are known (a runtime that needs them says so).
        }
        Map<String, Map<String, String>> addresses = thunderboltAddresses(links, observations);
        List<RuntimeCluster.Machine> machines = ranks.stream().map(rank -> new RuntimeCluster.Machine(rank.rank(), rank.machine(), rank.ssh(),
                rank.managementAddress(), rank.memoryGb(), addresses.getOrDefault(rank.machine(), Map.of()))).toList();
        InferenceSettings inference = cluster.inference() == null ? new InferenceSettings(null, InferenceSettings.Parallelism.TENSOR,
                InferenceSettings.DEFAULT_PORT) : cluster.inference();
        Optional<String> asGiven = model.map(Path::toString).or(() -> Optional.ofNullable(inference.model()));
        Optional<Path> catalogued = asGiven.flatMap(this::named);
        Optional<Path> chosenModel = catalogued.or(() -> asGiven.map(Path::of));
        try {
            // Only files under the models directory are sent to the Macs (issue 29), whatever the runtime; the
            // catalogue's own store is exempt (its files were verified when they were added).
            if (catalogued.isEmpty()) {
                chosenModel.ifPresent(io.macfleet.deployment.ModelsDirectory.configured()::confine);
            }
        } catch (IllegalArgumentException outside) {
            throw new RuntimeRefused(outside.getMessage());
        }
        return new RuntimeCluster(clusterName, inference, machines, chosenModel, nodeJar, configured, cablingFacts);
    }

    /**
     * For each machine, its own address on the cable toward each peer: the interface the cabling facts put the cable
     * in, and the IPv4 address the Mac's ifconfig shows there. Self-assigned 169.254/16 addresses are not configured
     * point-to-point addresses (every Thunderbolt port may have one in the same subnet) and do not count.
     */
    static Map<String, Map<String, String>> thunderboltAddresses(List<PeerConfiguration.PeerLink> links, Map<String, FactsObservation> observations) {
        Map<String, Map<String, String>> addresses = new LinkedHashMap<>();
        for (PeerConfiguration.PeerLink link : links) {
            FactsObservation observation = observations.get(link.machine());
            if (observation == null) {
                continue;
            }
            observation.facts().interfaces().stream().filter(face -> face.name().equals(link.networkInterface()))
                    .flatMap(face -> face.ipv4().stream()).map(address -> address.replaceFirst("/.*$", ""))
                    .filter(address -> !address.startsWith("169.254.")).findFirst()
                    .ifPresent(address -> addresses.computeIfAbsent(link.machine(), machine -> new LinkedHashMap<>()).put(link.peer(), address));
        }
        return addresses;
    }

    /** The plan of the cluster's runtime, changing nothing. */
    public RuntimePlan plan(String clusterName, Optional<Path> model, Optional<Path> nodeJar) {
        InferenceRuntime runtime = runtimeOf(clusterName);
        RuntimeCluster cluster = cluster(clusterName, model, nodeJar);
        if (runtime instanceof BundledRuntime) {
            // The bundled node deploys through NodeService, which adds the cluster's keys (kept under macfleet's home):
            // the plan shown is the one deployed.
            return BundledRuntime.describe(BundledRuntime.nodePlan(cluster).withKeys(nodes.keys(clusterName)));
        }
        return runtime.plan(cluster);
    }

    /** The cluster's OpenAI endpoint as its runtime serves it (no model needed to name it). */
    public String endpoint(String clusterName) {
        InferenceSettings inference = inference(clusterName);
        RankTarget head = nodes.ranks(clusterName).getFirst();
        int port = BundledRuntime.NAME.equals(inference.runtime()) ? head.httpPort() : inference.port();
        return "http://" + head.managementAddress() + ":" + port + "/v1";
    }

    /** Deploys a runtime other than the bundled node: exactly {@link #plan}, through {@link RuntimeDeployer}. */
    public RuntimeDeployer.Outcome deploy(String clusterName, Optional<Path> model, SshSettings settings, NodeDeployer.Listener listener) {
        InferenceRuntime runtime = runtimeOf(clusterName);
        RuntimePlan plan = runtime.plan(cluster(clusterName, model, Optional.empty()));
        record(settings.actor(), clusterName, "node.deploy", "deploying " + runtime.name() + " (" + plan.build() + ") to "
                + plan.machines().size() + " machines", AuditEvent.Outcome.SUCCESS);
        try (SshRun run = new SshTransport(settings, hostKeys, audit, clock).openRun()) {
            RuntimeDeployer.Outcome outcome = new RuntimeDeployer(runtime, runtimes.allLabels(), readyTimeout, System.getenv())
                    .deploy(run, plan, listener, NodeDeployer.Journal.NONE);
            record(settings.actor(), clusterName, "node.deploy", outcome.summary(), AuditEvent.Outcome.SUCCESS);
            return outcome;
        } catch (RuntimeException e) {
            record(settings.actor(), clusterName, "node.deploy", runtime.name() + " deployment failed: " + e.getMessage(), AuditEvent.Outcome.FAILURE);
            throw e;
        }
    }

    /** Clusters whose runtime is being upgraded now, with why: the supervisor leaves them alone (see {@link #upgrading}). */
    private final Map<String, String> upgrades = new java.util.concurrent.ConcurrentHashMap<>();

    /** Why the cluster's runtime is down on purpose now (an upgrade under way), or empty. */
    public Optional<String> upgrading(String clusterName) {
        return Optional.ofNullable(upgrades.get(clusterName));
    }

    /** What {@link #upgrade} would change on each Mac (the build it runs now and the plan's), reading the Macs, changing nothing. */
    public RuntimeUpgrade.Preview upgradePreview(String clusterName, SshSettings settings) {
        InferenceRuntime runtime = upgradable(clusterName);
        RuntimePlan plan = runtime.plan(cluster(clusterName, Optional.empty(), Optional.empty()));
        try (SshRun run = new SshTransport(settings, hostKeys, audit, clock).openRun()) {
            return new RuntimeUpgrade(runtime, new RuntimeDeployer(runtime, runtimes.allLabels(), readyTimeout, System.getenv())).preview(run, plan);
        }
    }

    /**
     * The lockstep upgrade of the cluster's runtime to the build the applied inventory names ({@link RuntimeUpgrade}):
     * audited as {@code node.upgrade}; while it runs the cluster counts as down on purpose for the supervisor.
     */
    public RuntimeUpgrade.Outcome upgrade(String clusterName, SshSettings settings, NodeDeployer.Listener listener) {
        InferenceRuntime runtime = upgradable(clusterName);
        RuntimePlan plan = runtime.plan(cluster(clusterName, Optional.empty(), Optional.empty()));
        if (upgrades.putIfAbsent(clusterName, "upgrade of " + runtime.name() + " to " + plan.build() + " by " + settings.actor()) != null) {
            throw new RuntimeRefused("cluster " + clusterName + ": an upgrade is already under way (" + upgrades.get(clusterName) + ")");
        }
        record(settings.actor(), clusterName, "node.upgrade", "upgrading " + runtime.name() + " to " + plan.build() + " on "
                + plan.machines().size() + " machines together", AuditEvent.Outcome.SUCCESS);
        try (SshRun run = new SshTransport(settings, hostKeys, audit, clock).openRun()) {
            RuntimeUpgrade.Outcome outcome = new RuntimeUpgrade(runtime, new RuntimeDeployer(runtime, runtimes.allLabels(), readyTimeout, System.getenv()))
                    .upgrade(run, plan, listener);
            record(settings.actor(), clusterName, "node.upgrade", outcome.summary(), AuditEvent.Outcome.SUCCESS);
            return outcome;
        } catch (RuntimeException e) {
            record(settings.actor(), clusterName, "node.upgrade", e.getMessage(), AuditEvent.Outcome.FAILURE);
            throw e;
        } finally {
            upgrades.remove(clusterName);
        }
    }

    private InferenceRuntime upgradable(String clusterName) {
        InferenceRuntime runtime = runtimeOf(clusterName);
        if (runtime instanceof BundledRuntime) {
            throw new RuntimeRefused("cluster " + clusterName + " runs the bundled node: its upgrade is macfleet node deploy " + clusterName
                    + " (each rank checks the others' version and refuses a mixed cluster)");
        }
        return runtime;
    }

    /**
     * One daemon of a runtime on one Mac as it is now: launchd's view, whether its probe answers (empty: ready; else what
     * the probe saw), and for a daemon that ends a link between Macs the transport its log reports.
     */
    public record DaemonStatus(String machine, int rank, String label, LaunchdService launchd, String probe, Optional<String> problem,
                               Optional<String> transport, Optional<String> error) {
        public boolean ready() {
            return launchd.running() && problem.isEmpty() && error.isEmpty();
        }
    }

    /** Every daemon of the cluster's runtime on every Mac, read from the Macs (launchd, the installed plist, logs) and probed. */
    public List<DaemonStatus> status(String clusterName, SshSettings settings) {
        InferenceRuntime runtime = runtimeOf(clusterName);
        List<RankTarget> ranks = nodes.ranks(clusterName);
        try (SshRun run = new SshTransport(settings, hostKeys, audit, clock).openRun()) {
            List<io.macfleet.ssh.MachineResult<List<DaemonStatus>>> results = run.onFleet(ranks.stream().map(RankTarget::ssh).toList(), machine -> {
                int rank = ranks.stream().filter(target -> target.machine().equals(machine.target().machine())).findFirst().orElseThrow().rank();
                return RuntimeProbe.look(machine, rank, runtime);
            });
            List<DaemonStatus> all = new java.util.ArrayList<>();
            for (var result : results) {
                if (result.succeeded()) {
                    all.addAll(result.value());
                } else {
                    int rank = ranks.stream().filter(target -> target.machine().equals(result.machine())).findFirst().orElseThrow().rank();
                    all.add(new DaemonStatus(result.machine(), rank, String.join(",", runtime.labels()), LaunchdService.notLoaded(), "-",
                            Optional.of("unreachable"), Optional.empty(), Optional.of(io.macfleet.deployment.NodeDeployer.message(result.error()))));
                }
            }
            all.sort(java.util.Comparator.comparingInt(DaemonStatus::rank));
            return all;
        }
    }

    /**
     * Starts, stops or restarts every daemon of the cluster's runtime: start and restart in the runtime's start order
     * (each label on every Mac that has it, then the next label), stop in the reverse order. One line per daemon.
     */
    public List<String> act(String clusterName, io.macfleet.deployment.NodeService.Action action, SshSettings settings) {
        InferenceRuntime runtime = runtimeOf(clusterName);
        List<RankTarget> ranks = nodes.ranks(clusterName);
        List<String> labels = action == io.macfleet.deployment.NodeService.Action.STOP ? runtime.startOrder().reversed() : runtime.startOrder();
        List<String> lines = new java.util.ArrayList<>();
        boolean failed = false;
        try (SshRun run = new SshTransport(settings, hostKeys, audit, clock).openRun()) {
            for (String label : labels) {
                for (RankTarget rank : ranks) {
                    String plist = io.macfleet.deployment.LaunchDaemon.DAEMON_DIRECTORY + label + ".plist";
                    if (!run.execute(rank.ssh(), io.macfleet.ssh.Command.reading("test", "-f", plist)).succeeded()) {
                        continue;
                    }
                    io.macfleet.ssh.CommandResult result = switch (action) {
                        case STOP -> run.execute(rank.ssh(), io.macfleet.ssh.Command.sudo(io.macfleet.ssh.PrivilegedProgram.LAUNCHCTL, "bootout", "system/" + label));
                        case START -> run.execute(rank.ssh(), io.macfleet.ssh.Command.sudo(io.macfleet.ssh.PrivilegedProgram.LAUNCHCTL, "bootstrap", "system", plist));
                        case RESTART -> run.execute(rank.ssh(), io.macfleet.ssh.Command.sudo(io.macfleet.ssh.PrivilegedProgram.LAUNCHCTL, "kickstart", "-k", "system/" + label));
                    };
                    // bootout 113 / bootstrap 5: already as asked.
                    boolean done = result.succeeded() || (action == io.macfleet.deployment.NodeService.Action.STOP && Integer.valueOf(113).equals(result.exitStatus()))
                            || (action == io.macfleet.deployment.NodeService.Action.START && Integer.valueOf(5).equals(result.exitStatus()));
                    failed |= !done;
                    lines.add(rank.machine() + " " + label + ": " + action.name().toLowerCase(java.util.Locale.ROOT)
                            + (done ? " done" : " failed (exit " + result.exitStatus() + "): " + result.stderr().strip()));
                }
                if (action != io.macfleet.deployment.NodeService.Action.STOP) {
                    // The next label's daemons connect to these: wait (up to 10 s) until they answer.
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    while (System.nanoTime() < deadline && ranks.stream().flatMap(rank -> status(run, rank, runtime).stream())
                            .anyMatch(daemon -> daemon.label().equals(label) && !daemon.ready())) {
                        try {
                            Thread.sleep(250);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            break;
                        }
                    }
                }
            }
        }
        record(settings.actor(), clusterName, "node." + action.name().toLowerCase(java.util.Locale.ROOT), String.join("; ", lines),
                failed ? AuditEvent.Outcome.FAILURE : AuditEvent.Outcome.SUCCESS);
        if (failed) {
            throw new NodeDeployer.DeployFailedException(action.name().toLowerCase(java.util.Locale.ROOT) + " failed on some machines: "
                    + String.join("; ", lines), true, null);
        }
        return lines;
    }

    private List<DaemonStatus> status(SshRun run, RankTarget rank, InferenceRuntime runtime) {
        return run.onFleet(List.of(rank.ssh()), machine -> RuntimeProbe.look(machine, rank.rank(), runtime)).getFirst().value();
    }

    /** The last lines of the logs of the runtime's daemons on one machine (standard output and error of each). */
    public String logs(String clusterName, String machineName, int lines, SshSettings settings) {
        InferenceRuntime runtime = runtimeOf(clusterName);
        RankTarget rank = nodes.ranks(clusterName).stream().filter(target -> target.machine().equals(machineName)).findFirst()
                .orElseThrow(() -> new RuntimeRefused(machineName + " is not a machine of cluster " + clusterName));
        StringBuilder text = new StringBuilder();
        try (SshRun run = new SshTransport(settings, hostKeys, audit, clock).openRun()) {
            for (String label : runtime.labels()) {
                for (String stream : List.of("out", "err")) {
                    String path = io.macfleet.deployment.LaunchDaemon.LOG_DIRECTORY + label + "." + stream + ".log";
                    io.macfleet.ssh.CommandResult tail = run.execute(rank.ssh(), io.macfleet.ssh.Command.reading("tail", "-n", Integer.toString(lines), path));
                    if (tail.succeeded()) {
                        text.append("==> ").append(path).append(" <==\n").append(tail.stdout());
                    }
                }
            }
        }
        return text.toString();
    }

    /** For tests and the demo: how long a deployment waits for each daemon to become ready. */
    public void readyTimeout(Duration timeout) {
        this.readyTimeout = timeout;
    }

    private InferenceSettings inference(String clusterName) {
        Cluster cluster = desiredState.cluster(clusterName).orElseThrow(() -> new RuntimeRefused(
                "no cluster named '" + clusterName + "' in the applied inventory (macfleet inventory apply DIR first)"));
        return cluster.inference() == null ? new InferenceSettings(null, InferenceSettings.Parallelism.TENSOR, InferenceSettings.DEFAULT_PORT)
                : cluster.inference();
    }

    private void record(String actor, String cluster, String action, String detail, AuditEvent.Outcome outcome) {
        audit.record(new AuditEvent(clock.instant(), actor, cluster, action, detail, outcome));
    }
}
