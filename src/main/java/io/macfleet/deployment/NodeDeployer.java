package io.macfleet.deployment;

import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.MachineSession;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshTarget;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Deploys the inference node to the ranks of a cluster in two phases. Staging (every Mac in parallel): directories,
 * free space for the model, the jar and the model copied resumably and verified by SHA-256 (skipped when already
 * there), the cluster file and the daemon's plist written next to them. Only when every Mac staged, the switch: the
 * daemon is booted out on every rank, then the new plist installed and bootstrapped on every rank, so all ranks
 * restart together. A failure while staging switches nothing: the old version keeps serving, and the error names
 * the machine. Every step is idempotent, so running the same deployment again (after a failure or a kill of macfleet)
 * ends in the same state; with nothing changed and every rank running it does nothing.
 */
public final class NodeDeployer {

    /** What to deploy where. */
    /**
     * @param modelVerifiedOn the Macs on which the model placement verified the release's model (SHA-256 by the Mac,
     *                        root:wheel 644) moments before: staging takes it as in place there without hashing it again
     */
    public record Plan(String cluster, String parallelism, List<RankTarget> ranks, NodeRelease release, String clusterFile,
                       List<String> javaOptions, int threads, Optional<JavaPackage> javaPackage, Optional<NodeKeys> keys,
                       java.util.Set<String> modelVerifiedOn) {
        public Plan(String cluster, String parallelism, List<RankTarget> ranks, NodeRelease release, String clusterFile,
                    List<String> javaOptions, int threads) {
            this(cluster, parallelism, ranks, release, clusterFile, javaOptions, threads, Optional.empty(), Optional.empty(), java.util.Set.of());
        }

        public Plan withJavaPackage(Optional<JavaPackage> javaPackage) {
            return new Plan(cluster, parallelism, ranks, release, clusterFile, javaOptions, threads, javaPackage, keys, modelVerifiedOn);
        }

        /** With the cluster's mesh and API keys: every rank proves the mesh key, the endpoint asks for the API key. */
        public Plan withKeys(NodeKeys nodeKeys) {
            return new Plan(cluster, parallelism, ranks, release, clusterFile, javaOptions, threads, javaPackage, Optional.of(nodeKeys), modelVerifiedOn);
        }

        /** With the Macs where the placement just verified the model (its survey or relay hashed it there). */
        public Plan withModelVerifiedOn(java.util.Set<String> machines) {
            return new Plan(cluster, parallelism, ranks, release, clusterFile, javaOptions, threads, javaPackage, keys, machines);
        }

        public Plan {
            modelVerifiedOn = java.util.Set.copyOf(modelVerifiedOn);
            ranks = List.copyOf(ranks);
            javaOptions = List.copyOf(javaOptions);
            if (ranks.isEmpty()) {
                throw new IllegalArgumentException("cluster " + cluster + " has no machines to deploy to");
            }
        }

        public String clusterFilePath() {
            return NodeLayout.clusterFile(NodeRelease.sha256(clusterFile.getBytes(StandardCharsets.UTF_8)));
        }

        public RankTarget coordinator() {
            return ranks.stream().filter(rank -> rank.rank() == 0).findFirst().orElseThrow();
        }

        public String endpoint() {
            return "http://" + coordinator().managementAddress() + ":" + coordinator().httpPort() + "/v1";
        }

        /** The daemon definition of one rank. */
        public LaunchDaemon daemon(RankTarget rank) {
            List<String> arguments = new ArrayList<>();
            arguments.add("/usr/bin/java");
            arguments.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"));
            arguments.addAll(javaOptions);
            // The API listens on the Mac's management address only, never on every interface.
            arguments.addAll(List.of("-jar", release.jarPath(), "serve", "--model", release.modelPath(), "--cluster", clusterFilePath(),
                    "--rank", Integer.toString(rank.rank()), "--host", rank.managementAddress(),
                    // The node refuses to load a model file other than the one deployed.
                    "--model-sha256", release.modelSha256()));
            if (keys.isPresent()) {
                // Paths, never the keys: an argument list is readable by every user of the Mac (ps).
                arguments.addAll(List.of("--cluster-key", NodeKeys.MESH_KEY_ON_MAC, "--api-key", "file:" + NodeKeys.API_KEY_ON_MAC));
            }
            if (threads > 0) {
                arguments.addAll(List.of("--threads", Integer.toString(threads)));
            }
            Map<String, String> environment = new LinkedHashMap<>();
            environment.put(NodeLayout.CLUSTER, cluster);
            environment.put(NodeLayout.RANK, Integer.toString(rank.rank()));
            environment.put(NodeLayout.NODE_VERSION, release.nodeVersion());
            environment.put(NodeLayout.NODE_SHA256, release.nodeSha256());
            environment.put(NodeLayout.MODEL_SHA256, release.modelSha256());
            // Not root: the daemon account owns nothing but its keys and its logs.
            return LaunchDaemon.node(NodeLayout.LABEL, arguments, environment, NodeLayout.NODE_DIRECTORY).runAs(DaemonAccount.NAME);
        }
    }

    /**
     * A Java runtime installer package ({@code .pkg}) on the control host, installed on Macs without Java 25 or later.
     * Its SHA-256 is the operator's: the file is refused here unless it hashes to it, and the copy on the Mac is checked
     * by the Mac's shasum before {@code installer} runs.
     */
    public record JavaPackage(java.nio.file.Path file, String sha256) {
        public static JavaPackage verified(java.nio.file.Path file, String expectedSha256) throws IOException {
            if (expectedSha256 == null || !expectedSha256.matches("[0-9a-fA-F]{64}")) {
                throw new IllegalArgumentException("--java-package needs --java-package-sha256 with its SHA-256 (64 hex digits)");
            }
            if (!java.nio.file.Files.isRegularFile(file) || !file.getFileName().toString().endsWith(".pkg")) {
                throw new IllegalArgumentException("Java package " + file + " is not a readable .pkg file");
            }
            String actual = NodeRelease.sha256(file);
            if (!actual.equalsIgnoreCase(expectedSha256)) {
                throw new IllegalArgumentException("Java package " + file + " has SHA-256 " + actual + ", not the " + expectedSha256.toLowerCase(java.util.Locale.ROOT)
                        + " given: refused");
            }
            return new JavaPackage(file, actual);
        }

        String remotePath() {
            return NodeLayout.HOME + "/packages/" + NodeLayout.shortHash(sha256) + "-" + file.getFileName();
        }
    }

    /** Told what happens, for progress bars and logs; called from several threads. */
    public interface Listener {
        Listener NONE = new Listener() {
        };

        default void copying(String machine, String file, long done, long total) {
        }

        default void step(String machine, String what) {
        }
    }

    /** What staging did on one Mac. */
    public record Staged(String machine, CopyOutcome.Kind jar, CopyOutcome.Kind model, boolean definitionChanged, boolean running) {
        boolean unchanged() {
            return jar == CopyOutcome.Kind.ALREADY_PRESENT && model == CopyOutcome.Kind.ALREADY_PRESENT && !definitionChanged && running;
        }
    }

    /** How a deployment ended. */
    public record Outcome(boolean switched, List<Staged> staged, String endpoint, String summary) {
    }

    /** A deployment that stopped; {@code switched} says whether the old version may still serve (false: it does). */
    public static final class DeployFailedException extends RuntimeException implements io.macfleet.command.CommandFailure {
        private final boolean switched;

        public DeployFailedException(String message, boolean switched, Throwable cause) {
            super(message, cause);
            this.switched = switched;
        }

        public boolean switched() {
            return switched;
        }

        @Override
        public Kind failureKind() {
            return Kind.CHECK_FAILED;
        }
    }

    /** Journal of a deployment's phases (stored in the database by the service). */
    public interface Journal {
        Journal NONE = (phase, message) -> {
        };

        void phase(String phase, String message);
    }

    private final Duration healthTimeout;

    public NodeDeployer(Duration healthTimeout) {
        this.healthTimeout = healthTimeout;
    }

    /** Stages everything everywhere, then switches all ranks together (unless nothing changed), then waits for health. */
    public Outcome deploy(SshRun run, Plan plan, Listener listener, Journal journal) {
        journal.phase("staging", "staging on " + plan.ranks().size() + " machines");
        List<Staged> staged = stage(run, plan, listener);
        if (staged.stream().allMatch(Staged::unchanged)) {
            journal.phase("serving", "nothing changed");
            return new Outcome(false, staged, plan.endpoint(), "nothing to do: every rank already runs node " + plan.release().nodeVersion()
                    + " (" + NodeLayout.shortHash(plan.release().nodeSha256()) + ") with model " + plan.release().modelFileName()
                    + " (" + NodeLayout.shortHash(plan.release().modelSha256()) + ")");
        }
        if (staged.stream().anyMatch(machine -> machine.jar() != CopyOutcome.Kind.ALREADY_PRESENT || machine.model() != CopyOutcome.Kind.ALREADY_PRESENT)) {
            journal.phase("staging", "loading the new files once on " + plan.coordinator().machine() + " before the switch");
            checkLoads(run, plan, listener);
        }
        journal.phase("switching", "all machines staged; restarting every rank together");
        switchAll(run, plan, listener);
        journal.phase("starting", "waiting for the cluster to form");
        awaitHealthy(run, plan.ranks());
        journal.phase("serving", "serving at " + plan.endpoint());
        return new Outcome(true, staged, plan.endpoint(), "switched " + plan.ranks().size() + " ranks to node " + plan.release().nodeVersion()
                + " (" + NodeLayout.shortHash(plan.release().nodeSha256()) + ") with model " + plan.release().modelFileName()
                + "; serving at " + plan.endpoint());
    }

    /**
     * Before any switch, rank 0's Mac loads the staged model with the staged node ({@code verify-model}: its SHA-256,
     * header, tensors and tokenizer) as the SSH user, while the running cluster keeps serving; a model or node that does
     * not load ends the deployment with nothing switched and the node's own words why.
     */
    public void checkLoads(SshRun run, Plan plan, Listener listener) {
        RankTarget rank = plan.coordinator();
        List<String> command = new ArrayList<>(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"));
        command.addAll(plan.javaOptions());
        command.addAll(List.of("-jar", plan.release().jarPath(), "verify-model", "--model", plan.release().modelPath(),
                "--model-sha256", plan.release().modelSha256()));
        List<MachineResult<CommandResult>> results = run.onFleet(List.of(rank.ssh()), machine -> {
            listener.step(rank.machine(), "loading the new model once before the switch");
            return machine.execute(Command.of("/usr/bin/java", command.toArray(String[]::new)),
                    io.macfleet.ssh.ExecutionLimits.DEFAULTS.withCommandTimeout(LOAD_CHECK_TIMEOUT));
        });
        MachineResult<CommandResult> result = results.getFirst();
        if (!result.succeeded()) {
            throw new DeployFailedException("cannot check that the staged model loads on " + rank.machine() + ", nothing was switched (the running"
                    + " version, if any, keeps serving): " + message(result.error()), false, result.error());
        }
        CommandResult check = result.value();
        if (!check.succeeded()) {
            String said = (check.stderr() + "\n" + check.stdout()).strip();
            List<String> lines = said.lines().filter(line -> !line.isBlank()).toList();
            String tail = lines.isEmpty() ? "it printed nothing" : String.join(" | ", lines.subList(Math.max(0, lines.size() - 3), lines.size()));
            throw new DeployFailedException("the staged model " + plan.release().modelFileName() + " does not load with node " + plan.release().nodeVersion()
                    + " on " + rank.machine() + " (exit " + check.exitStatus() + "), nothing was switched (the running version, if any, keeps serving): "
                    + tail, false, null);
        }
    }

    /** How long the load check may take: it hashes the model and maps it, as a rank's start does. */
    private static final Duration LOAD_CHECK_TIMEOUT = Duration.ofMinutes(15);

    /** Phase one. Throws {@link DeployFailedException} naming every machine that failed; nothing is switched then. */
    public List<Staged> stage(SshRun run, Plan plan, Listener listener) {
        Map<String, RankTarget> byMachine = plan.ranks().stream().collect(Collectors.toMap(RankTarget::machine, Function.identity()));
        List<SshTarget> targets = plan.ranks().stream().map(RankTarget::ssh).toList();
        List<MachineResult<Staged>> results = run.onFleet(targets, machine -> stageOne(machine, byMachine.get(machine.target().machine()), plan, listener));
        List<String> failures = new ArrayList<>();
        for (MachineResult<Staged> result : results) {
            if (!result.succeeded()) {
                failures.add(result.machine() + ": " + message(result.error()));
            }
        }
        if (!failures.isEmpty()) {
            throw new DeployFailedException("staging failed, nothing was switched (the running version, if any, keeps serving): "
                    + String.join("; ", failures), false, results.stream().map(MachineResult::error).filter(e -> e != null).findFirst().orElse(null));
        }
        return results.stream().map(MachineResult::value).toList();
    }

    private Staged stageOne(MachineSession machine, RankTarget rank, Plan plan, Listener listener) throws IOException {
        String name = rank.machine();
        NodeRelease release = plan.release();
        listener.step(name, "preparing directories");
        String user = machine.target().user();
        if (DaemonAccount.ensure(machine)) {
            listener.step(name, "created the daemon account " + DaemonAccount.NAME);
        }
        // The node's files are root's (the SSH user cannot replace what the daemon runs); BSD install -d also sets
        // the owner and mode of directories that exist (an older deploy made them the SSH user's).
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", "root", "-g", "wheel", "-m", "755",
                NodeLayout.HOME, NodeLayout.NODE_DIRECTORY, NodeLayout.MODEL_DIRECTORY, NodeLayout.KEY_DIRECTORY)), "cannot create " + NodeLayout.HOME);
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", user, "-m", "700", NodeLayout.STAGING_DIRECTORY)),
                "cannot create " + NodeLayout.STAGING_DIRECTORY);
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", DaemonAccount.NAME, "-g", DaemonAccount.NAME, "-m", "755",
                NodeLayout.LOG_DIRECTORY)), "cannot create " + NodeLayout.LOG_DIRECTORY);
        try {
            checkJava(machine, name);
        } catch (IllegalStateException missing) {
            if (plan.javaPackage().isEmpty()) {
                throw missing;
            }
            installJava(machine, name, plan.javaPackage().get(), listener);
        }
        // Where the placement has just verified the model, its survey checked the free space and its relay (or the
        // survey) hashed the file on this Mac: neither is done twice.
        boolean verifiedByPlacement = plan.modelVerifiedOn().contains(name);
        if (!verifiedByPlacement) {
            checkSpace(machine, name, release);
        }
        RemoteShell shell = shell(machine);
        CopyOutcome.Kind jar = placed(machine, release.jarPath(), release.nodeSha256()) ? CopyOutcome.Kind.ALREADY_PRESENT
                : machine.withSftp("copy " + release.jarPath(), sftp -> new FileCopy(name, sftp, shell)
                        .copy(release.nodeJar(), NodeLayout.staged(release.jarPath()), (done, total) -> listener.copying(name, "node", done, total))).kind();
        if (jar != CopyOutcome.Kind.ALREADY_PRESENT) {
            installAsRoot(machine, release.jarPath());
        }
        CopyOutcome.Kind model;
        if (verifiedByPlacement ? owned(machine, release.modelPath()) : placed(machine, release.modelPath(), release.modelSha256())) {
            listener.copying(name, "model", release.modelSize(), release.modelSize());
            model = CopyOutcome.Kind.ALREADY_PRESENT;
        } else if (release.modelOnlyOnMacs()) {
            // node deploy refuses this before staging (NodeService); kept so that no path copies what this host lacks.
            throw new IllegalStateException(name + " does not hold the model " + release.catalogueName().orElse(release.modelFileName())
                    + " verified at " + release.modelPath() + ", and this host has no copy (a catalogue model held on a Mac): run macfleet model place "
                    + plan.cluster() + " " + release.catalogueName().orElse("NAME") + " first");
        } else if (release.modelFile().isPresent()) {
            model = machine.withSftpStripes("copy " + release.modelPath(), FileCopy.connectionsFor(release.modelSize()),
                    channels -> new FileCopy(name, channels, shell).copy(release.modelFile().get(), NodeLayout.staged(release.modelPath()),
                            (done, total) -> listener.copying(name, "model", done, total))).kind();
            installAsRoot(machine, release.modelPath());
        } else {
            model = fetch(machine, name, release, listener);
            installAsRoot(machine, release.modelPath());
        }
        listener.step(name, "writing the configuration");
        byte[] clusterFile = plan.clusterFile().getBytes(StandardCharsets.UTF_8);
        machine.upload(NodeLayout.staged(plan.clusterFilePath()), clusterFile, 0644);
        installAsRoot(machine, plan.clusterFilePath());
        if (plan.keys().isPresent()) {
            // Readable by the daemon's account only; staged in the SSH user's private directory for a moment.
            installKey(machine, NodeKeys.MESH_KEY_ON_MAC, plan.keys().get().meshKey());
            installKey(machine, NodeKeys.API_KEY_ON_MAC, plan.keys().get().apiKey());
        }
        String plist = LaunchDaemonPlist.render(plan.daemon(rank));
        machine.upload(STAGED_PLIST, plist.getBytes(StandardCharsets.UTF_8), 0644);
        CommandResult current = machine.execute(Command.reading("cat", NodeLayout.PLIST));
        boolean changed = !current.succeeded() || !current.stdout().equals(plist);
        boolean running = status(machine, rank.rank()).running();
        return new Staged(name, jar, model, changed, running);
    }

    /** The daemon's definition as staged, installed as root's by the switch. */
    private static final String STAGED_PLIST = NodeLayout.STAGING_DIRECTORY + "/" + NodeLayout.LABEL + ".plist";

    /**
     * Whether the file is in place with this SHA-256 and root's (root:wheel 644): a file an older deploy left to the
     * SSH user is installed again, so that account cannot change it.
     */
    private static boolean placed(MachineSession machine, String path, String sha256) {
        if (!owned(machine, path)) {
            return false;
        }
        CommandResult sum = machine.execute(Command.reading("shasum", "-a", "256", path));
        return sum.succeeded() && sum.stdout().startsWith(sha256 + " ");
    }

    /** Whether the file is root's, mode 644 (a cheap stat; the SHA-256 is {@link #placed}'s). */
    private static boolean owned(MachineSession machine, String path) {
        CommandResult owner = machine.execute(Command.reading("stat", "-f", "%Su:%Sg %Lp", path));
        return owner.succeeded() && owner.stdout().strip().equals("root:wheel 644");
    }

    /** Root installs the staged copy (checked by the Mac's shasum when it was copied) as root:wheel 644, then the copy goes. */
    private static void installAsRoot(MachineSession machine, String finalPath) {
        String staged = NodeLayout.staged(finalPath);
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-o", "root", "-g", "wheel", "-m", "644", staged, finalPath),
                io.macfleet.ssh.ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofHours(1))), "cannot install " + finalPath);
        require(machine.execute(Command.of("rm", "-f", staged)), "cannot remove the staged " + staged);
    }

    /** A key file of the daemon's account, mode 600 (unless it is there with the same content: compared by hash, never read back). */
    private static void installKey(MachineSession machine, String path, byte[] key) throws IOException {
        CommandResult owner = machine.execute(Command.reading("stat", "-f", "%Su:%Sg %Lp", path));
        String staged = NodeLayout.staged(path);
        machine.upload(staged, key, 0600);
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-o", DaemonAccount.NAME, "-g", DaemonAccount.NAME, "-m", "600", staged, path)),
                "cannot install " + path + (owner.succeeded() ? " (now " + owner.stdout().strip() + ")" : ""));
        require(machine.execute(Command.of("rm", "-f", staged)), "cannot remove the staged " + staged);
    }

    /** Java 25 or later must be on the Mac: {@code /usr/bin/java -version} (it prints to standard error). */
    static void checkJava(MachineSession machine, String name) {
        CommandResult version = machine.execute(Command.reading("/usr/bin/java", "-version"));
        String printed = version.stderr() + version.stdout();
        java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("version \"(\\d+)").matcher(printed);
        if (!version.succeeded() || !matcher.find()) {
            throw new IllegalStateException("no Java runtime: `/usr/bin/java -version` answered "
                    + (printed.isBlank() ? "exit " + version.exitStatus() : "'" + printed.strip().lines().findFirst().orElse("") + "'")
                    + "; install a JDK 25 or later (see docs/inference-deployment.md)");
        }
        int feature = Integer.parseInt(matcher.group(1));
        if (feature < 25) {
            throw new IllegalStateException("Java " + feature + " found, the node needs 25 or later");
        }
    }

    /** Copies the package (verified by the Mac's shasum), runs {@code installer -pkg PATH -target /}, checks Java again. */
    private static void installJava(MachineSession machine, String name, JavaPackage javaPackage, Listener listener) throws IOException {
        listener.step(name, "installing Java from " + javaPackage.file().getFileName());
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", machine.target().user(), "-m", "755",
                NodeLayout.HOME + "/packages")), "cannot create " + NodeLayout.HOME + "/packages");
        RemoteShell shell = shell(machine);
        machine.withSftp("copy " + javaPackage.remotePath(), sftp -> new FileCopy(name, sftp, shell)
                .copy(javaPackage.file(), javaPackage.remotePath(), (done, total) -> listener.copying(name, "java", done, total)));
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALLER, "-pkg", javaPackage.remotePath(), "-target", "/"),
                io.macfleet.ssh.ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofMinutes(10))), "installing " + javaPackage.file().getFileName() + " failed");
        try {
            checkJava(machine, name);
        } catch (IllegalStateException still) {
            throw new IllegalStateException("installed " + javaPackage.file().getFileName() + " but " + still.getMessage());
        }
    }

    /** Enough free space in the model directory for what is not there yet (df -k: 1024-byte blocks). */
    private static void checkSpace(MachineSession machine, String name, NodeRelease release) throws IOException {
        // A copy goes to the staging directory first and root installs it from there: twice the model until then.
        long needed = machine.withSftp("stat " + release.modelPath(), sftp -> {
            var whole = sftp.statExistence(release.modelPath());
            if (whole != null && whole.getSize() == release.modelSize()) {
                return 0L;
            }
            var partial = sftp.statExistence(NodeLayout.staged(release.modelPath()) + FileCopy.PARTIAL_SUFFIX);
            return 2 * release.modelSize() - (partial == null ? 0L : Math.min(partial.getSize(), release.modelSize()));
        });
        if (needed <= 0) {
            return;
        }
        CommandResult df = machine.execute(Command.reading("df", "-k", NodeLayout.MODEL_DIRECTORY));
        long available = DiskFree.availableBytes(df.stdout())
                .orElseThrow(() -> new IllegalStateException("cannot read the free space of " + NodeLayout.MODEL_DIRECTORY + " from `df -k`: "
                        + (df.stderr().isBlank() ? df.stdout().strip() : df.stderr().strip())));
        if (available < needed) {
            throw new IllegalStateException("not enough disk space for the model " + release.modelFileName() + ": "
                    + DiskFree.human(needed) + " needed in " + NodeLayout.MODEL_DIRECTORY + ", " + DiskFree.human(available) + " available");
        }
    }

    /** The Mac downloads the model itself, resuming a partial download (curl -C -), then the hash is checked there. */
    private static CopyOutcome.Kind fetch(MachineSession machine, String name, NodeRelease release, Listener listener) throws IOException {
        // Downloaded into the staging directory (the SSH user's), installed as root's by the caller.
        String target = NodeLayout.staged(release.modelPath());
        String partial = target + FileCopy.PARTIAL_SUFFIX;
        long downloaded = machine.withSftp("stat " + partial, sftp -> {
            var attributes = sftp.statExistence(partial);
            return attributes == null ? 0L : attributes.getSize();
        });
        if (downloaded > release.modelSize()) {
            // Not a prefix of this model (the URL's file changed?): a resume would only append to it.
            require(machine.execute(Command.of("rm", "-f", partial)), "cannot remove the oversized partial download " + partial);
            downloaded = 0;
        }
        // A download that finished before the deployment was interrupted is not fetched again: resuming it
        // would ask for a range past the end, which servers answer with 416 and curl --fail with exit 22.
        if (downloaded < release.modelSize()) {
            listener.step(name, (downloaded > 0 ? "resuming the download of " : "downloading ") + release.modelUrl().orElseThrow()
                    + (downloaded > 0 ? " at byte " + downloaded : ""));
            CommandResult curl = machine.execute(Command.of("curl", "--fail", "--silent", "--show-error", "--location", "-C", "-",
                    "--output", partial, release.modelUrl().orElseThrow().toString()), io.macfleet.ssh.ExecutionLimits.DEFAULTS
                    .withCommandTimeout(Duration.ofHours(12)));
            if (!curl.succeeded()) {
                throw new IllegalStateException("download of " + release.modelUrl().get() + " on " + name + " failed (exit "
                        + curl.exitStatus() + "): " + curl.stderr().strip() + "; run the deployment again to resume it");
            }
        }
        RemoteShell.Answer sum = shell(machine).run("shasum", List.of("-a", "256", partial));
        if (sum.exitStatus() != 0 || !sum.stdout().startsWith(release.modelSha256())) {
            machine.execute(Command.of("rm", "-f", partial));
            throw new IllegalStateException("the downloaded model's SHA-256 is " + sum.stdout().split("\\s+")[0] + ", expected "
                    + release.modelSha256() + ": removed it");
        }
        require(machine.execute(Command.of("mv", "-f", partial, target)), "cannot move the downloaded model into place");
        listener.copying(name, "model", release.modelSize(), release.modelSize());
        return CopyOutcome.Kind.COPIED;
    }

    /** Phase two: out on every rank, then in on every rank. */
    public void switchAll(SshRun run, Plan plan, Listener listener) {
        List<SshTarget> targets = plan.ranks().stream().map(RankTarget::ssh).toList();
        failOn(run.onFleet(targets, machine -> {
            listener.step(machine.target().machine(), "stopping the old daemon");
            bootout(machine);
            return null;
        }), "stopping the old version");
        String stagedPlist = STAGED_PLIST;
        failOn(run.onFleet(targets, machine -> {
            listener.step(machine.target().machine(), "starting the new daemon");
            require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-o", "root", "-g", "wheel", "-m", "644", stagedPlist,
                    NodeLayout.PLIST)), "cannot install " + NodeLayout.PLIST);
            bootstrap(machine);
            return null;
        }), "starting the new version");
    }

    static void bootout(MachineSession machine) {
        CommandResult out = machine.execute(Command.sudo(PrivilegedProgram.LAUNCHCTL, "bootout", "system/" + NodeLayout.LABEL));
        // 113: not loaded; 3 ("No such process"): older macOS says so for the same.
        if (!out.succeeded() && out.exitStatus() != 113 && out.exitStatus() != 3) {
            throw new IllegalStateException("launchctl bootout failed (exit " + out.exitStatus() + "): " + out.stderr().strip());
        }
    }

    static void bootstrap(MachineSession machine) {
        try {
            Launchctl.enableAndBootstrap(Launchctl.over(machine::execute), NodeLayout.LABEL);
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** The rank's state read from its Mac: launchd's print and the environment of the installed plist. */
    public static NodeRankStatus status(MachineSession machine, int rank) {
        String name = machine.target().machine();
        try {
            CommandResult print = machine.execute(Command.reading("launchctl", "print", "system/" + NodeLayout.LABEL));
            LaunchdService launchd = LaunchdService.parse(print.exitStatus() == null ? -1 : print.exitStatus(), print.stdout(), print.stderr());
            CommandResult plist = machine.execute(Command.reading("cat", NodeLayout.PLIST));
            Map<String, String> environment = Map.of();
            if (plist.succeeded()) {
                try {
                    environment = LaunchDaemonPlist.parse(plist.stdout()).environment();
                } catch (IOException | IllegalArgumentException e) {
                    environment = Map.of();
                }
            }
            return new NodeRankStatus(rank, name, launchd, Optional.ofNullable(environment.get(NodeLayout.NODE_VERSION)),
                    Optional.ofNullable(environment.get(NodeLayout.NODE_SHA256)), Optional.ofNullable(environment.get(NodeLayout.MODEL_SHA256)),
                    Optional.empty());
        } catch (RuntimeException e) {
            return new NodeRankStatus(rank, name, LaunchdService.notLoaded(), Optional.empty(), Optional.empty(), Optional.empty(),
                    Optional.of(message(e)));
        }
    }

    /**
     * The node jar and model the installed plist runs whose files no longer hash to what the deployment recorded in it
     * (the node checks its model's hash only when it starts): one sentence each, empty when both match or nothing is
     * deployed. Hashes the whole model on the Mac, so it is asked for ({@code node status --verify-files}), not polled.
     */
    public static List<String> changedFiles(MachineSession machine) {
        CommandResult installed = machine.execute(Command.reading("cat", NodeLayout.PLIST));
        if (!installed.succeeded()) {
            return List.of();
        }
        LaunchDaemon daemon;
        try {
            daemon = LaunchDaemonPlist.parse(installed.stdout());
        } catch (IOException | IllegalArgumentException e) {
            return List.of(NodeLayout.PLIST + " cannot be read: " + e.getMessage());
        }
        List<String> arguments = daemon.programArguments();
        List<String> changed = new ArrayList<>();
        compare(machine, "node jar", after(arguments, "-jar"), daemon.environment().get(NodeLayout.NODE_SHA256), changed);
        compare(machine, "model", after(arguments, "--model"), daemon.environment().get(NodeLayout.MODEL_SHA256), changed);
        return changed;
    }

    private static String after(List<String> arguments, String option) {
        int index = arguments.indexOf(option);
        return index >= 0 && index + 1 < arguments.size() ? arguments.get(index + 1) : null;
    }

    private static void compare(MachineSession machine, String what, String path, String expected, List<String> changed) {
        if (path == null || expected == null) {
            return;
        }
        CommandResult sum = machine.execute(Command.reading("shasum", "-a", "256", path));
        if (!sum.succeeded()) {
            changed.add(what + " " + path + " cannot be hashed (" + (sum.stderr().isBlank() ? "exit " + sum.exitStatus() : sum.stderr().strip()) + ")");
        } else if (!sum.stdout().startsWith(expected + " ")) {
            changed.add(what + " " + path + " has SHA-256 " + sum.stdout().split("\\s+")[0] + ", the deployment installed " + expected
                    + ": the file changed (deploy again to put it back)");
        }
    }

    /** Whether rank 0's /health says ok now (every rank joined the cluster), asked once with a short timeout. */
    static boolean clusterServes(RankTarget coordinator) {
        URI health = URI.create("http://" + coordinator.managementAddress() + ":" + coordinator.httpPort() + "/health");
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()) {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(3)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 && response.body().contains("\"ok\"");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Waits until rank 0's /health says ok (every rank joined). Every few seconds it also reads each rank from its
     * Mac, so a rank that launchd starts again and again ends the wait at once, with the last lines of its log (why
     * it exits), instead of after the whole timeout; a timeout names each rank that does not run and its log too.
     */
    public void awaitHealthy(SshRun run, List<RankTarget> ranks) {
        RankTarget coordinator = ranks.stream().filter(rank -> rank.rank() == 0).findFirst().orElseThrow();
        URI health = URI.create("http://" + coordinator.managementAddress() + ":" + coordinator.httpPort() + "/health");
        long deadline = System.nanoTime() + healthTimeout.toNanos();
        long nextLook = System.nanoTime() + RANK_LOOK_INTERVAL.toNanos();
        String last = "no answer";
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()) {
            while (System.nanoTime() < deadline) {
                try {
                    HttpResponse<String> response = client.send(HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(5)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (response.statusCode() == 200 && response.body().contains("\"ok\"")) {
                        return;
                    }
                    last = "HTTP " + response.statusCode() + " " + response.body().strip();
                } catch (IOException e) {
                    last = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
                }
                if (System.nanoTime() >= nextLook) {
                    nextLook = System.nanoTime() + RANK_LOOK_INTERVAL.toNanos();
                    List<String> looping = ranksNotRunning(run, ranks, true);
                    if (!looping.isEmpty()) {
                        throw new DeployFailedException("the ranks were started but the cluster does not form: " + String.join("; ", looping),
                                true, null);
                    }
                }
                Thread.sleep(500);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<String> notRunning = ranksNotRunning(run, ranks, false);
        throw new DeployFailedException("the ranks were started but the cluster did not become healthy within " + healthTimeout.toSeconds()
                + " s: " + health + " last said " + last + (notRunning.isEmpty() ? "" : "; " + String.join("; ", notRunning))
                + " (macfleet node logs MACHINE shows a rank's whole log)", true, null);
    }

    /** How often the wait for the cluster reads the ranks from their Macs. */
    private static final Duration RANK_LOOK_INTERVAL = Duration.ofSeconds(3);

    /**
     * Each rank that loops (or, unless {@code loopingOnly}, does not run) as "rank N on MACHINE is STATE (...): LOG", the
     * log being the last lines of its error log. A Mac that cannot be read now is left out: the wait goes on.
     */
    private static List<String> ranksNotRunning(SshRun run, List<RankTarget> ranks, boolean loopingOnly) {
        Map<String, RankTarget> byMachine = ranks.stream().collect(Collectors.toMap(RankTarget::machine, Function.identity()));
        List<MachineResult<String>> results = run.onFleet(ranks.stream().map(RankTarget::ssh).toList(), machine -> {
            RankTarget rank = byMachine.get(machine.target().machine());
            NodeRankStatus status = status(machine, rank.rank());
            if (status.error().isPresent() || (loopingOnly ? !status.crashLooping() : status.running())) {
                return null;
            }
            CommandResult tail = machine.execute(Command.reading("tail", "-n", "3", NodeLayout.errorLog()));
            String log = tail.succeeded() && !tail.stdout().isBlank() ? tail.stdout().strip().replaceAll("\\s*\\n\\s*", " | ") : "its log is empty";
            return "rank " + rank.rank() + " on " + rank.machine() + " is " + status.state()
                    + status.runs().stream().mapToObj(runs -> " (" + runs + " runs, last exit " + status.launchd().lastExit().describe() + ")").findFirst().orElse("")
                    + ", its log says: " + log;
        });
        return results.stream().filter(MachineResult::succeeded).map(MachineResult::value).filter(java.util.Objects::nonNull).toList();
    }

    /** Fails naming every machine whose part of a step failed (the runtime deployer shares it). */
    public static void failOn(List<MachineResult<Object>> results, String what) {
        List<String> failures = results.stream().filter(result -> !result.succeeded())
                .map(result -> result.machine() + ": " + message(result.error())).toList();
        if (!failures.isEmpty()) {
            throw new DeployFailedException(what + " failed: " + String.join("; ", failures)
                    + " (run the deployment again: every step is repeated safely)", true, null);
        }
    }

    public static CommandResult require(CommandResult result, String what) {
        if (!result.succeeded()) {
            throw new IllegalStateException(what + ": `" + result.command().display() + "` exited " + result.exitStatus()
                    + (result.stderr().isBlank() ? "" : ": " + result.stderr().strip()));
        }
        return result;
    }

    public static RemoteShell shell(MachineSession machine) {
        return new RemoteShell() {
            @Override
            public Answer run(String commandLine) {
                throw new UnsupportedOperationException("command lines are not sent as text; use run(program, arguments)");
            }

            @Override
            public Answer run(String program, List<String> arguments) {
                CommandResult result = machine.execute(Command.reading(program, arguments.toArray(String[]::new)));
                return new Answer(result.exitStatus() == null ? -1 : result.exitStatus(), result.stdout(), result.stderr());
            }
        };
    }

    public static String message(Throwable error) {
        if (error == null) {
            return "unknown error";
        }
        return error.getMessage() == null ? error.toString() : error.getMessage();
    }
}
