package io.macfleet.deployment;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.PeerConfiguration;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InferenceSettings;
import io.macfleet.inventory.Machine;
import io.macfleet.reach.MachineReach;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTransport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The inference node of the clusters of the applied inventory: deploy, status, start, stop, restart, logs. The CLI,
 * the REST API, the console and the playbook step all come through here.
 */
@ApplicationScoped
public class NodeService {

    /** A name the applied inventory does not know, or a request that cannot be carried out as given. */
    public static final class RefusedException extends RuntimeException implements io.macfleet.command.CommandFailure {
        public RefusedException(String message) {
            super(message);
        }

        @Override
        public Kind failureKind() {
            return Kind.USAGE;
        }
    }

    /** What to deploy: a model file or URL (with its hash and size), the node jar; empty to take up an unfinished one. */
    public record Request(Optional<String> model, Optional<String> modelSha256, Optional<Long> modelSize, Optional<Path> nodeJar) {
        public static Request resume() {
            return new Request(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
        }
    }

    private final DesiredStateStore desiredState;
    private final ClusterCabling cabling;
    private final FactsService facts;
    private final HostKeyStore hostKeys;
    private final AuditLog audit;
    private final NodeDeploymentStore deployments;
    private final Clock clock;
    private final Path keysDirectory;
    private volatile Duration healthTimeout = Duration.ofSeconds(300);
    /** Clusters this process deploys in the background now: a second click does not start a second deployment. */
    private final java.util.Set<String> deploying = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @Inject
    public NodeService(DesiredStateStore desiredState, ClusterCabling cabling, FactsService facts, JdbcHostKeyStore hostKeys, JdbcAuditLog audit,
                       DataSource dataSource, io.macfleet.config.MacfleetConfig config) {
        this(desiredState, cabling, facts, hostKeys, audit, new NodeDeploymentStore(dataSource), Clock.systemUTC(),
                Path.of(config.home()).resolve("node-keys"));
    }

    /** Keys in a directory of this process's own (tests): made afresh for each service. */
    public NodeService(DesiredStateStore desiredState, ClusterCabling cabling, FactsService facts, HostKeyStore hostKeys, AuditLog audit,
                       NodeDeploymentStore deployments, Clock clock) {
        this(desiredState, cabling, facts, hostKeys, audit, deployments, clock, temporaryKeyDirectory());
    }

    public NodeService(DesiredStateStore desiredState, ClusterCabling cabling, FactsService facts, HostKeyStore hostKeys, AuditLog audit,
                       NodeDeploymentStore deployments, Clock clock, Path keysDirectory) {
        this.keysDirectory = keysDirectory;
        this.desiredState = desiredState;
        this.cabling = cabling;
        this.facts = facts;
        this.hostKeys = hostKeys;
        this.audit = audit;
        this.deployments = deployments;
        this.clock = clock;
    }

    /** The model catalogue and its memory fit; absent in services built by hand (tests), where models are paths. */
    private volatile io.macfleet.models.ModelCatalogue catalogue;
    private volatile io.macfleet.models.ModelFits fits;

    private volatile ModelFanOut fanOut;

    /** The model placement over Thunderbolt, when the application has one (tests that build this class by hand have none). */
    @Inject
    void useFanOut(jakarta.enterprise.inject.Instance<ModelFanOut> fanOuts) {
        this.fanOut = fanOuts.isResolvable() ? fanOuts.get() : null;
    }

    /**
     * Sends the model once and lets the Macs pass it on; when that cannot be done, staging copies it to each Mac as
     * before. Answers the Macs where the placement verified it, which staging then neither hashes nor space-checks again.
     */
    private java.util.Set<String> fanOut(String clusterName, NodeRelease release, SshSettings settings, NodeDeployer.Listener listener) {
        ModelFanOut placement = fanOut;
        if (placement == null || release.modelUrl().isPresent() || release.catalogueName().isEmpty()) {
            return java.util.Set.of();
        }
        try {
            Optional<ModelFanOut.Placed> placed = placement.fanOut(clusterName, release.catalogueName().get(), settings, listener);
            placed.ifPresent(done -> listener.step(clusterName, done.summary()));
            return placed.map(ModelFanOut.Placed::verifiedOn).orElse(java.util.Set.of());
        } catch (RuntimeException failed) {
            if (release.modelOnlyOnMacs()) {
                // No copy here to fall back on: deploy() refuses, naming the Mac that holds it and why the placement failed.
                listener.step(clusterName, "placing the model from the Mac that holds it did not work: " + failed.getMessage());
                lastFanOutFailure.put(clusterName, failed.getMessage());
                return java.util.Set.of();
            }
            listener.step(clusterName, "placing the model over Thunderbolt did not work (" + failed.getMessage()
                    + "); copying it to each Mac from here instead");
            return java.util.Set.of();
        }
    }

    /** Why the last fan-out of a cluster's Mac-held model failed, for the refusal that follows it. */
    private final java.util.Map<String, String> lastFanOutFailure = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * A catalogue model held on a Mac has no copy here: every Mac must hold it verified after the fan-out (the Mac that
     * holds it has it already; staging checks that one). Refused before staging anything otherwise, naming that Mac.
     */
    private void refuseWhenAMacLacksAMacHeldModel(String clusterName, NodeRelease release, NodeDeployer.Plan plan) {
        if (!release.modelOnlyOnMacs()) {
            return;
        }
        String name = release.catalogueName().orElseThrow();
        Optional<String> holder = catalogue == null ? Optional.empty() : catalogue.heldOn(name);
        List<String> lacking = plan.ranks().stream().map(RankTarget::machine)
                .filter(machine -> !plan.modelVerifiedOn().contains(machine) && holder.map(held -> !held.equals(machine)).orElse(true)).toList();
        String failure = lastFanOutFailure.remove(clusterName);
        if (!lacking.isEmpty()) {
            throw new RefusedException("model " + name + " is held on " + holder.orElse("a Mac") + " (model add --via), not on this host, and "
                    + String.join(", ", lacking) + " do" + (lacking.size() == 1 ? "es" : "") + " not hold it: this host cannot copy it to them"
                    + (failure == null ? " (the placement from " + holder.orElse("that Mac") + " did not run: a cluster of one Mac, or no placement here)"
                    : " (the placement from " + holder.orElse("that Mac") + " failed: " + failure + ")")
                    + "; macfleet model place " + clusterName + " " + name + " places it, or add the model again without --via");
        }
    }

    /**
     * A catalogue name whose model only a Mac holds (model add --via): a release without a copy here, checked against the
     * cluster's memory like any catalogue model; empty for anything else.
     */
    private Optional<NodeRelease> heldOnMac(String clusterName, Path jar, String model) throws IOException {
        if (catalogue == null || !io.macfleet.models.ModelCatalogue.isName(model)) {
            return Optional.empty();
        }
        Optional<String> holder = catalogue.heldOn(model);
        Optional<io.macfleet.models.CatalogueModel> entry = catalogue.find(model);
        if (holder.isEmpty() || entry.isEmpty()) {
            return Optional.empty();
        }
        if (entry.get().files().size() != 1 || !entry.get().files().getFirst().path().endsWith(".gguf")) {
            throw new RefusedException("model " + model + " is held on " + holder.get() + " (model add --via) and has " + entry.get().files().size()
                    + " files: the bundled node deploys a model of one GGUF file from a Mac; add it again without --via to deploy it from here");
        }
        try {
            fits.refuseWhenNotFitting(clusterName, model);
        } catch (io.macfleet.models.ModelRefused doesNotFit) {
            throw new RefusedException(doesNotFit.getMessage());
        }
        io.macfleet.models.ModelFile file = entry.get().files().getFirst();
        return Optional.of(NodeRelease.heldOnMac(jar, model, file.path().substring(file.path().lastIndexOf('/') + 1), file.sha256(), file.size()));
    }

    /** The catalogue, its memory fit and the fan-out for a service built by hand (tests), as CDI gives them to the application's. */
    public void useModels(io.macfleet.models.ModelCatalogue catalogue, io.macfleet.models.ModelFits fits, ModelFanOut fanOut) {
        this.catalogue = catalogue;
        this.fits = fits;
        this.fanOut = fanOut;
    }

    @Inject
    void useCatalogue(io.macfleet.models.ModelCatalogue catalogue, io.macfleet.models.ModelFits fits) {
        this.catalogue = catalogue;
        this.fits = fits;
    }

    /**
     * A model as the inventory or --model names it: a catalogue name is the catalogue's verified file on this host (and
     * must fit the cluster's memory), anything else a path under the models directory.
     */
    private Path modelPath(String clusterName, String model) {
        if (catalogue != null) {
            Optional<Path> named = catalogue.resolve(model);
            if (named.isPresent()) {
                try {
                    fits.refuseWhenNotFitting(clusterName, model);
                } catch (io.macfleet.models.ModelRefused doesNotFit) {
                    throw new RefusedException(doesNotFit.getMessage());
                }
                return named.get();
            }
        }
        // A path (not a name): only files under the models directory are sent to the Macs (issue 29); the catalogue's
        // own store is exempt, its files were verified when they were added. The refusal reads the same whether a file
        // of that name exists or not, so it tells nothing about this host's files.
        try {
            return ModelsDirectory.configured().requireGguf(Path.of(model));
        } catch (IllegalArgumentException refused) {
            if (catalogue == null) {
                throw refused;
            }
            throw new RefusedException("no model named " + model + " in the catalogue (macfleet model list), and " + refused.getMessage());
        }
    }

    public NodeDeploymentStore deployments() {
        return deployments;
    }

    /** The cluster's mesh and API keys (made at its first deploy), kept under the macfleet home. */
    public NodeKeys keys(String clusterName) {
        return NodeKeys.of(keysDirectory, clusterName);
    }

    private static Path temporaryKeyDirectory() {
        try {
            return java.nio.file.Files.createTempDirectory("macfleet-node-keys");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The ranks of a cluster: coordinator first, then by name, as the cabling plan orders them. */
    public List<RankTarget> ranks(String clusterName) {
        Cluster cluster = cluster(clusterName);
        List<Machine> machines = desiredState.machines(clusterName);
        if (machines.isEmpty()) {
            throw new RefusedException("cluster " + clusterName + " has no machines in the applied inventory");
        }
        List<String> order = ClusterCabling.plan(cluster, machines).machines();
        List<RankTarget> ranks = new ArrayList<>();
        for (int rank = 0; rank < order.size(); rank++) {
            String name = order.get(rank);
            Machine machine = machines.stream().filter(m -> m.name().equals(name)).findFirst().orElseThrow();
            int port = cluster.inference() == null ? InferenceSettings.DEFAULT_PORT : cluster.inference().port();
            ranks.add(RankTarget.of(rank, name, MachineReach.of(machine).ssh(), machine.address(),
                    machine.memoryGb() == null ? 0 : machine.memoryGb(), port));
        }
        return ranks;
    }

    /** The plan of a deployment: ranks, cluster file (Thunderbolt links when the cabling check passes), daemons. */
    public NodeDeployer.Plan plan(String clusterName, NodeRelease release) {
        Cluster cluster = cluster(clusterName);
        List<RankTarget> ranks = ranks(clusterName);
        List<PeerConfiguration.PeerLink> links = List.of();
        try {
            ClusterCabling.Cluster observed = cabling.cluster(clusterName, Optional.empty());
            var report = observed.check();
            if (report.passed()) {
                links = configuredLinks(PeerConfiguration.from(report, observed.facts()).links(),
                        facts.latest(ranks.stream().map(RankTarget::machine).toList()));
            }
        } catch (RuntimeException noCheckedCabling) {
            // No stored facts or no passing check: the ranks reach each other at their management addresses.
        }
        String parallelism = cluster.inference() == null || cluster.inference().parallelism() == null ? "tensor"
                : cluster.inference().parallelism().name().toLowerCase(java.util.Locale.ROOT);
        return plan(clusterName, parallelism, ranks, release, links).withKeys(keys(clusterName));
    }

    /** The bundled node's plan from its parts, without the cluster's keys (the bundled runtime plans through this too). */
    public static NodeDeployer.Plan plan(String clusterName, String parallelism, List<RankTarget> ranks, NodeRelease release,
                                         List<PeerConfiguration.PeerLink> links) {
        boolean oneHost = ranks.stream().allMatch(rank -> rank.managementAddress().startsWith("127."));
        // Simulated Macs share this host's cores and memory: small heaps and one thread per rank.
        List<String> javaOptions = oneHost ? List.of("-Xmx256m", "-XX:+UseSerialGC") : List.of();
        return new NodeDeployer.Plan(clusterName, parallelism, ranks, release,
                NodeClusterConfig.render(clusterName, parallelism, ranks, links), javaOptions, oneHost ? 1 : 0);
    }

    /**
     * The cables whose point-to-point addresses are configured on both ends (the stored ifconfig facts show each end's
     * address on its interface). The deploy does not configure them yet: a cluster file naming addresses no interface
     * has would keep the ranks from finding each other, so such cables are left out and the ranks use the management
     * addresses.
     */
    public static List<PeerConfiguration.PeerLink> configuredLinks(List<PeerConfiguration.PeerLink> links,
                                                            java.util.Map<String, io.macfleet.facts.FactsObservation> observations) {
        java.util.function.Predicate<PeerConfiguration.PeerLink> local = link -> {
            io.macfleet.facts.FactsObservation observation = observations.get(link.machine());
            return observation != null && observation.facts().interfaces().stream().anyMatch(face -> face.name().equals(link.networkInterface())
                    && face.ipv4().stream().anyMatch(address -> address.startsWith(link.localAddress() + "/")));
        };
        return links.stream().filter(link -> local.test(link) && links.stream().anyMatch(reverse -> reverse.machine().equals(link.peer())
                && reverse.peer().equals(link.machine()) && reverse.localAddress().equals(link.peerAddress()) && local.test(reverse))).toList();
    }

    /** The release, carrying the catalogue's name when {@code model} is one (what the fan-out places). */
    private NodeRelease named(NodeRelease release, String model) {
        return catalogue != null && catalogue.find(model).isPresent() ? release.withCatalogueName(model) : release;
    }

    /** The release a request names, or that of the cluster's unfinished deployment. */
    public NodeRelease release(String clusterName, Request request) {
        cluster(clusterName);
        Path jar = request.nodeJar().orElseGet(NodeService::defaultNodeJar);
        try {
            if (request.model().isPresent()) {
                String model = request.model().get();
                if (model.startsWith("http://") || model.startsWith("https://")) {
                    return NodeRelease.of(jar, URI.create(model), request.modelSha256().orElse(null), request.modelSize().orElse(0L));
                }
                Optional<NodeRelease> held = heldOnMac(clusterName, jar, model);
                if (held.isPresent()) {
                    return held.get();
                }
                return named(NodeRelease.of(jar, modelPath(clusterName, model)), model);
            }
            Optional<NodeDeploymentStore.Deployment> unfinished = deployments.unfinished(clusterName);
            if (unfinished.isPresent()) {
                NodeDeploymentStore.Deployment pending = unfinished.get();
                NodeRelease release = pending.modelSource().startsWith(NodeRelease.HELD_ON_MAC)
                        ? heldOnMac(clusterName, Path.of(pending.nodeJar()), pending.modelSource().substring(NodeRelease.HELD_ON_MAC.length()))
                                .orElseThrow(() -> new RefusedException("the unfinished deployment " + pending.id() + " of " + clusterName + " deploys "
                                        + pending.modelSource() + ", which the catalogue no longer holds on a Mac: give --model to deploy anew"))
                        : pending.modelSource().startsWith("http")
                        ? NodeRelease.of(Path.of(pending.nodeJar()), URI.create(pending.modelSource()), pending.modelSha256(), pending.modelSize())
                        : NodeRelease.of(Path.of(pending.nodeJar()), Path.of(pending.modelSource()));
                if (!release.nodeSha256().equals(pending.nodeSha256()) || !release.modelSha256().equals(pending.modelSha256())) {
                    throw new RefusedException("the unfinished deployment " + pending.id() + " of " + clusterName + " staged other files than "
                            + pending.nodeJar() + " and " + pending.modelSource() + " hold now (they changed): give --model to deploy anew");
                }
                return release;
            }
            Cluster cluster = cluster(clusterName);
            if (cluster.inference() != null && cluster.inference().model() != null) {
                Optional<NodeRelease> held = heldOnMac(clusterName, jar, cluster.inference().model());
                if (held.isPresent()) {
                    return held.get();
                }
                return named(NodeRelease.of(jar, modelPath(clusterName, cluster.inference().model())), cluster.inference().model());
            }
            throw new RefusedException("no --model given and cluster " + clusterName + " names no inference.model in the inventory");
        } catch (IOException e) {
            throw new RefusedException("cannot read what to deploy: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new RefusedException(e.getMessage());
        }
    }

    /** Deploys (see {@link NodeDeployer}), journaling each phase in the database and the audit log. */
    public NodeDeployer.Outcome deploy(String clusterName, NodeRelease release, SshSettings settings, NodeDeployer.Listener listener) {
        return deploy(clusterName, release, Optional.empty(), settings, listener);
    }

    /** As above, installing Java from {@code javaPackage} on Macs that lack Java 25 or later. */
    public NodeDeployer.Outcome deploy(String clusterName, NodeRelease release, Optional<NodeDeployer.JavaPackage> javaPackage,
                                       SshSettings settings, NodeDeployer.Listener listener) {
        Cluster cluster = cluster(clusterName);
        if (cluster.inference() != null && !InferenceSettings.BUNDLED.equals(cluster.inference().runtime())) {
            // Another runtime's cluster (the playbook's inference-node step, an old client): the node is not what serves it.
            throw new RefusedException("cluster " + clusterName + " runs the " + cluster.inference().runtime() + " runtime, not the bundled node:"
                    + " macfleet node deploy " + clusterName + " deploys it");
        }
        NodeDeployer.Plan planned = plan(clusterName, release).withJavaPackage(javaPackage);
        Optional<NodeDeploymentStore.Deployment> unfinished = deployments.unfinished(clusterName)
                .filter(pending -> pending.nodeSha256().equals(release.nodeSha256()) && pending.modelSha256().equals(release.modelSha256()));
        long id = unfinished.map(NodeDeploymentStore.Deployment::id)
                .orElseGet(() -> deployments.create(clusterName, release, settings.actor(), clock.instant()));
        record(settings.actor(), clusterName, "node.deploy", (unfinished.isPresent() ? "resumed deployment " : "deployment ") + id + ": node "
                + release.nodeVersion() + " (" + NodeLayout.shortHash(release.nodeSha256()) + "), model " + release.modelFileName() + " ("
                + NodeLayout.shortHash(release.modelSha256()) + ")", AuditEvent.Outcome.SUCCESS);
        NodeDeployer.Journal journal = (phase, message) -> deployments.phase(id, phase, message, clock.instant());
        NodeDeployer.Plan plan = planned.withModelVerifiedOn(fanOut(clusterName, release, settings, listener));
        try {
            refuseWhenAMacLacksAMacHeldModel(clusterName, release, plan);
        } catch (RefusedException refused) {
            deployments.phase(id, "failed", refused.getMessage(), clock.instant());
            record(settings.actor(), clusterName, "node.deploy", "deployment " + id + " refused: " + refused.getMessage(), AuditEvent.Outcome.FAILURE);
            throw refused;
        }
        try (SshRun run = transport(settings).openRun()) {
            NodeDeployer.Outcome outcome = new NodeDeployer(healthTimeout).deploy(run, plan, listener, journal);
            record(settings.actor(), clusterName, "node.deploy", "deployment " + id + ": " + outcome.summary(), AuditEvent.Outcome.SUCCESS);
            return outcome;
        } catch (RuntimeException e) {
            deployments.phase(id, "failed", e.getMessage(), clock.instant());
            record(settings.actor(), clusterName, "node.deploy", "deployment " + id + " failed: " + e.getMessage(), AuditEvent.Outcome.FAILURE);
            throw e;
        }
    }

    /**
     * Starts {@link #deploy} on a virtual thread and returns at once (the REST API and the console); how it went is in
     * {@link #deployments()} and the audit log. Refused while this process deploys the same cluster already.
     */
    public void deployInBackground(String clusterName, NodeRelease release, String actor) {
        if (!deploying.add(clusterName)) {
            throw new RefusedException("a deployment of " + clusterName + " is already under way; see its state before starting another");
        }
        Thread.ofVirtual().name("node-deploy-" + clusterName).start(() -> {
            try {
                deploy(clusterName, release, SshSettings.defaults(actor), NodeDeployer.Listener.NONE);
            } catch (RuntimeException recorded) {
                // Recorded as the deployment's failed phase and in the audit log.
            } finally {
                deploying.remove(clusterName);
            }
        });
    }

    /** The state of every rank, read from the Macs. */
    public List<NodeRankStatus> status(String clusterName, SshSettings settings) {
        List<RankTarget> ranks = ranks(clusterName);
        try (SshRun run = transport(settings).openRun()) {
            List<MachineResult<NodeRankStatus>> results = run.onFleet(ranks.stream().map(RankTarget::ssh).toList(),
                    machine -> NodeDeployer.status(machine, rankOf(ranks, machine.target().machine()).rank()));
            List<NodeRankStatus> statuses = new ArrayList<>();
            for (MachineResult<NodeRankStatus> result : results) {
                statuses.add(result.succeeded() ? result.value() : new NodeRankStatus(rankOf(ranks, result.machine()).rank(), result.machine(),
                        LaunchdService.notLoaded(), Optional.empty(), Optional.empty(), Optional.empty(),
                        Optional.of(NodeDeployer.message(result.error()))));
            }
            RankTarget coordinator = ranks.stream().filter(rank -> rank.rank() == 0).findFirst().orElseThrow();
            return NodeDeployer.clusterServes(coordinator) ? statuses.stream().map(NodeRankStatus::servingCluster).toList() : statuses;
        }
    }

    /** Per machine of the cluster, its node files that no longer hash to what was deployed (see {@link NodeDeployer#changedFiles}). */
    public java.util.Map<String, List<String>> changedFiles(String clusterName, SshSettings settings) {
        List<RankTarget> ranks = ranks(clusterName);
        java.util.Map<String, List<String>> changed = new java.util.LinkedHashMap<>();
        try (SshRun run = transport(settings).openRun()) {
            for (MachineResult<List<String>> result : run.onFleet(ranks.stream().map(RankTarget::ssh).toList(), NodeDeployer::changedFiles)) {
                changed.put(result.machine(), result.succeeded() ? result.value() : List.of("cannot check: " + NodeDeployer.message(result.error())));
            }
        }
        return changed;
    }

    public enum Action { START, STOP, RESTART }

    /** Starts (bootstrap), stops (bootout) or restarts (kickstart -k) the daemon on every rank, all at once. */
    public List<String> act(String clusterName, Action action, SshSettings settings) {
        List<RankTarget> ranks = ranks(clusterName);
        List<String> lines = new ArrayList<>();
        try (SshRun run = transport(settings).openRun()) {
            List<MachineResult<String>> results = run.onFleet(ranks.stream().map(RankTarget::ssh).toList(), machine -> {
                switch (action) {
                    case STOP -> NodeDeployer.bootout(machine);
                    case START -> {
                        if (!NodeDeployer.status(machine, 0).launchd().loaded()) {
                            NodeDeployer.bootstrap(machine);
                        }
                    }
                    case RESTART -> {
                        CommandResult kick = machine.execute(Command.sudo(PrivilegedProgram.LAUNCHCTL, "kickstart", "-k", "system/" + NodeLayout.LABEL));
                        if (!kick.succeeded()) {
                            throw new IllegalStateException("launchctl kickstart -k failed (exit " + kick.exitStatus() + "): " + kick.stderr().strip()
                                    + (kick.exitStatus() != null && kick.exitStatus() == 113 ? " (not loaded: macfleet node start " + clusterName + ")" : ""));
                        }
                    }
                }
                return "ok";
            });
            boolean failed = false;
            for (MachineResult<String> result : results) {
                lines.add(result.machine() + ": " + (result.succeeded() ? action.name().toLowerCase(java.util.Locale.ROOT) + " done"
                        : NodeDeployer.message(result.error())));
                failed |= !result.succeeded();
            }
            if (!failed && action != Action.STOP) {
                // Done when the cluster answers, not when launchd took the order: a rank that cannot start says why.
                try {
                    new NodeDeployer(healthTimeout).awaitHealthy(run, ranks);
                    lines.add("serving at http://" + ranks.getFirst().managementAddress() + ":" + ranks.getFirst().httpPort() + "/v1");
                } catch (NodeDeployer.DeployFailedException notServing) {
                    // Every Mac took the order; the cluster is what does not answer.
                    String done = action.name().toLowerCase(java.util.Locale.ROOT) + "ed";
                    record(settings.actor(), clusterName, "node." + action.name().toLowerCase(java.util.Locale.ROOT),
                            String.join("; ", lines) + "; not serving: " + notServing.getMessage(), AuditEvent.Outcome.FAILURE);
                    throw new NodeDeployer.DeployFailedException(done + " every rank, but "
                            + notServing.getMessage().replaceFirst("^the ranks were started but ", ""), true, null);
                }
            }
            record(settings.actor(), clusterName, "node." + action.name().toLowerCase(java.util.Locale.ROOT), String.join("; ", lines),
                    failed ? AuditEvent.Outcome.FAILURE : AuditEvent.Outcome.SUCCESS);
            if (failed) {
                throw new NodeDeployer.DeployFailedException(action.name().toLowerCase(java.util.Locale.ROOT) + " failed on some machines: "
                        + String.join("; ", lines), true, null);
            }
        }
        return lines;
    }

    /** The last lines of the node's log (standard error, where it writes) on one machine. */
    public String logs(String machineName, int lines, SshSettings settings) {
        Machine machine = desiredState.machine(machineName)
                .orElseThrow(() -> new RefusedException("no machine named '" + machineName + "' in the applied inventory"));
        try (SshRun run = transport(settings).openRun()) {
            CommandResult tail = run.execute(MachineReach.of(machine).ssh(), Command.reading("tail", "-n", Integer.toString(lines), NodeLayout.errorLog()));
            if (!tail.succeeded()) {
                throw new RefusedException(machineName + ": cannot read " + NodeLayout.errorLog() + ": " + tail.stderr().strip());
            }
            return tail.stdout();
        }
    }

    /** For tests and the demo: how long a deployment waits for the cluster to become healthy. */
    public void healthTimeout(Duration timeout) {
        this.healthTimeout = timeout;
    }

    private SshTransport transport(SshSettings settings) {
        return new SshTransport(settings, hostKeys, audit, clock);
    }

    private void record(String actor, String cluster, String action, String detail, AuditEvent.Outcome outcome) {
        audit.record(new AuditEvent(clock.instant(), actor, cluster, action, detail, outcome));
    }

    private static RankTarget rankOf(List<RankTarget> ranks, String machine) {
        return ranks.stream().filter(rank -> rank.machine().equals(machine)).findFirst().orElseThrow();
    }

    private Cluster cluster(String clusterName) {
        return desiredState.cluster(clusterName).orElseThrow(() -> new RefusedException(
                "no cluster named '" + clusterName + "' in the applied inventory (macfleet inventory apply DIR first)"));
    }

    /**
     * The node's jar built next to this macfleet: MACFLEET_NODE_JAR, else inference-node/target/inference-node-*.jar
     * under the working directory or the directory the macfleet application was started from.
     */
    public static Path defaultNodeJar() {
        String configured = System.getenv("MACFLEET_NODE_JAR");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        List<Path> roots = new ArrayList<>(List.of(Path.of("").toAbsolutePath()));
        try {
            Path code = Path.of(NodeService.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path parent = code; parent != null; parent = parent.getParent()) {
                roots.add(parent);
            }
        } catch (Exception unknown) {
            // The working directory is still tried.
        }
        for (Path root : roots) {
            Path target = root.resolve("inference-node").resolve("target");
            if (java.nio.file.Files.isDirectory(target)) {
                try (var files = java.nio.file.Files.list(target)) {
                    Optional<Path> jar = files.filter(file -> file.getFileName().toString().matches("inference-node-[^/]*\\.jar")
                            && !file.getFileName().toString().endsWith("-sources.jar")).findFirst();
                    if (jar.isPresent()) {
                        return jar.get();
                    }
                } catch (IOException e) {
                    // next candidate
                }
            }
        }
        throw new RefusedException("cannot find the inference node's jar: build it (./mvnw -B -pl inference-node package -DskipTests),"
                + " set MACFLEET_NODE_JAR or give --node-jar");
    }
}
