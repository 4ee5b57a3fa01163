package io.macfleet.runtime;

import static io.macfleet.deployment.NodeDeployer.failOn;
import static io.macfleet.deployment.NodeDeployer.message;
import static io.macfleet.deployment.NodeDeployer.require;
import static io.macfleet.deployment.NodeDeployer.shell;

import io.macfleet.deployment.CopyOutcome;
import io.macfleet.deployment.DaemonAccount;
import io.macfleet.deployment.FileCopy;
import io.macfleet.deployment.LaunchDaemon;
import io.macfleet.deployment.LaunchDaemonPlist;
import io.macfleet.deployment.Launchctl;
import io.macfleet.deployment.LaunchdService;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.RemoteShell;
import io.macfleet.runtime.RuntimePlan.DaemonPlan;
import io.macfleet.runtime.RuntimePlan.MachinePlan;
import io.macfleet.runtime.RuntimePlan.Probe;
import io.macfleet.runtime.RuntimePlan.StagedFile;
import io.macfleet.secrets.SecretReference;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.MachineSession;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshRun;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Carries out a {@link RuntimePlan} of any runtime but the bundled node (which keeps {@link NodeDeployer}), in the
 * same two phases. Staging, every Mac in parallel: directories, each file copied resumably and checked by the Mac's
 * shasum (skipped when there), secrets written with their mode, the runtime's build read back on each Mac (its
 * {@code --version}), each daemon's plist staged. Macs whose builds differ are refused here, naming each Mac's build,
 * before anything is switched. Then the switch: every daemon of every runtime is booted out (and other runtimes'
 * daemons disabled, so a reboot does not start them), and this plan's daemons are installed and bootstrapped by start
 * order, each order ready (its probe) before the next starts; then the cluster's health probe must answer.
 */
public final class RuntimeDeployer {

    /** Where staged plists wait for the switch. */
    static final String STAGING = "/usr/local/macfleet/staged";

    /** What staging found on one Mac. */
    public record Staged(String machine, List<CopyOutcome.Kind> copies, Optional<String> build, boolean definitionChanged, boolean running) {
        boolean unchanged() {
            return copies.stream().allMatch(kind -> kind == CopyOutcome.Kind.ALREADY_PRESENT) && !definitionChanged && running;
        }
    }

    /** How a deployment ended. */
    public record Outcome(boolean switched, List<Staged> staged, String endpoint, String summary) {
    }

    private final InferenceRuntime runtime;
    private final List<String> allLabels;
    private final Duration readyTimeout;
    private final Map<String, String> environment;

    /**
     * @param allLabels every label of every runtime: those not in the plan are booted out and disabled at the switch
     * @param environment where {@code env:} secret references are resolved (the process environment in production)
     */
    public RuntimeDeployer(InferenceRuntime runtime, List<String> allLabels, Duration readyTimeout, Map<String, String> environment) {
        this.runtime = runtime;
        this.allLabels = List.copyOf(allLabels);
        this.readyTimeout = readyTimeout;
        this.environment = Map.copyOf(environment);
    }

    public Outcome deploy(SshRun run, RuntimePlan plan, NodeDeployer.Listener listener, NodeDeployer.Journal journal) {
        journal.phase("staging", "staging " + plan.runtime() + " on " + plan.machines().size() + " machines");
        List<Staged> staged = stage(run, plan, listener);
        if (staged.stream().allMatch(Staged::unchanged) && ready(plan.health())) {
            journal.phase("serving", "nothing changed");
            return new Outcome(false, staged, plan.endpoint(), "nothing to do: every Mac already runs " + plan.runtime() + " build "
                    + staged.getFirst().build().orElse("?") + " as planned; serving at " + plan.endpoint());
        }
        journal.phase("switching", "all machines staged; switching every daemon in start order");
        switchAll(run, plan, listener);
        journal.phase("serving", "serving at " + plan.endpoint());
        return new Outcome(true, staged, plan.endpoint(), "switched " + plan.machines().size() + " Macs to " + plan.runtime() + " build "
                + staged.getFirst().build().orElse("?") + "; serving at " + plan.endpoint());
    }

    /** Phase one; throws naming every machine that failed, or the builds when they differ. Nothing is switched then. */
    public List<Staged> stage(SshRun run, RuntimePlan plan, NodeDeployer.Listener listener) {
        List<MachineResult<Staged>> results = run.onFleet(plan.machines().stream().map(MachinePlan::ssh).toList(),
                machine -> stageOne(machine, plan.machine(machine.target().machine()), listener));
        List<String> failures = results.stream().filter(result -> !result.succeeded())
                .map(result -> result.machine() + ": " + message(result.error())).toList();
        if (!failures.isEmpty()) {
            throw new NodeDeployer.DeployFailedException("staging failed, nothing was switched (the running version, if any, keeps serving): "
                    + String.join("; ", failures), false, null);
        }
        List<Staged> staged = results.stream().map(MachineResult::value).toList();
        checkSameBuild(plan.runtime(), staged);
        return staged;
    }

    /** Refuses Macs whose runtime reports different builds (or none), naming each Mac's. */
    static void checkSameBuild(String runtime, List<Staged> staged) {
        Map<String, String> builds = new TreeMap<>();
        staged.forEach(machine -> builds.put(machine.machine(), machine.build().orElse("unreadable")));
        boolean versioned = staged.stream().anyMatch(machine -> machine.build().isPresent());
        if (versioned && (builds.values().stream().distinct().count() > 1 || builds.containsValue("unreadable"))) {
            throw new RuntimeRefused("refused: the Macs would run different " + runtime + " builds ("
                    + builds.entrySet().stream().map(entry -> entry.getKey() + " " + entry.getValue()).collect(Collectors.joining(", "))
                    + "); nothing was switched. Every Mac must run the identical build: check what else on those Macs is loaded in its place"
                    + " (another copy of its libraries on the library path) and deploy again");
        }
    }

    private Staged stageOne(MachineSession machine, MachinePlan plan, NodeDeployer.Listener listener) throws IOException {
        String name = plan.machine();
        String user = machine.target().user();
        listener.step(name, "preparing directories");
        if (DaemonAccount.ensure(machine)) {
            listener.step(name, "created the daemon account " + DaemonAccount.NAME);
        }
        // Program, model and configuration directories are root's (BSD install -d also sets the owner of one that exists,
        // which gives the models directory back to root after an older deploy made it the SSH user's); only what the
        // daemon writes is its account's; the SSH user has its private staging directory.
        List<String> writable = runtime.writableDirectories(plan);
        List<String> install = new ArrayList<>(List.of("-d", "-o", "root", "-g", "wheel", "-m", "755"));
        plan.directories().stream().filter(directory -> !writable.contains(directory)).forEach(install::add);
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, install.toArray(String[]::new))), "cannot create " + plan.directories());
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", user, "-m", "700", STAGING)), "cannot create " + STAGING);
        List<String> daemonOwned = new ArrayList<>(List.of("-d", "-o", DaemonAccount.NAME, "-g", DaemonAccount.NAME, "-m", "755",
                LaunchDaemon.LOG_DIRECTORY));
        daemonOwned.addAll(writable);
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, daemonOwned.toArray(String[]::new))),
                "cannot create " + LaunchDaemon.LOG_DIRECTORY + " " + writable);
        RemoteShell shell = shell(machine);
        List<CopyOutcome.Kind> copies = new ArrayList<>();
        for (StagedFile file : plan.files()) {
            String staged = staged(file.destination());
            switch (file.source()) {
                case StagedFile.Source.LocalFile local -> {
                    if (file.sha256().isPresent() && placed(machine, file.destination(), file.sha256().get(), file.mode())) {
                        listener.copying(name, local.path().getFileName().toString(), file.size(), file.size());
                        copies.add(CopyOutcome.Kind.ALREADY_PRESENT);
                        continue;
                    }
                    String label = local.path().getFileName().toString();
                    CopyOutcome outcome = machine.withSftpStripes("copy " + file.destination(), FileCopy.connectionsFor(file.size()),
                            channels -> new FileCopy(name, channels, shell).copy(local.path(), staged,
                                    (done, total) -> listener.copying(name, label, done, total)));
                    // Whatever the copy found at the staged path, the file in place was not this one.
                    copies.add(outcome.kind() == CopyOutcome.Kind.ALREADY_PRESENT ? CopyOutcome.Kind.COPIED : outcome.kind());
                    installAsRoot(machine, staged, file.destination(), file.mode());
                }
                case StagedFile.Source.Secret secret -> {
                    byte[] content = SecretReference.of(secret.reference()).resolve(environment).getBytes(StandardCharsets.UTF_8);
                    // The key is readable by the daemon's account only, so the SSH user compares a root-owned fingerprint
                    // beside it (a hash of a key: keys are random strings) instead of reading the key back.
                    String fingerprint = fingerprint(content);
                    String fingerprintPath = file.destination() + ".sha256";
                    CommandResult current = machine.execute(Command.reading("cat", fingerprintPath));
                    boolean same = current.succeeded() && current.stdout().strip().equals(fingerprint)
                            && owned(machine, file.destination(), DaemonAccount.NAME + ":" + DaemonAccount.NAME + " 600");
                    if (!same) {
                        machine.upload(staged, content, 0600);
                        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-o", DaemonAccount.NAME, "-g", DaemonAccount.NAME,
                                "-m", "600", staged, file.destination())), "cannot install " + file.destination());
                        require(machine.execute(Command.of("rm", "-f", staged)), "cannot remove the staged " + staged);
                        machine.upload(staged, (fingerprint + "\n").getBytes(StandardCharsets.UTF_8), 0644);
                        installAsRoot(machine, staged, fingerprintPath, 0644);
                    }
                    copies.add(same ? CopyOutcome.Kind.ALREADY_PRESENT : CopyOutcome.Kind.COPIED);
                }
                case StagedFile.Source.Content text -> {
                    byte[] content = text.text().getBytes(StandardCharsets.UTF_8);
                    boolean same = placed(machine, file.destination(), io.macfleet.deployment.NodeRelease.sha256(content), file.mode());
                    if (!same) {
                        machine.upload(staged, content, file.mode());
                        installAsRoot(machine, staged, file.destination(), file.mode());
                    }
                    copies.add(same ? CopyOutcome.Kind.ALREADY_PRESENT : CopyOutcome.Kind.COPIED);
                }
            }
        }
        Optional<String> built = runtime.builtDirectory(plan);
        boolean alreadyBuilt = built.isPresent() && owned(machine, built.get(), "root:wheel 755");
        if (built.isPresent() && !alreadyBuilt) {
            // The SSH user builds it (pip runs as that account, never as root); root takes it once the build is read back.
            require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", user, "-m", "755", built.get())),
                    "cannot create " + built.get());
        }
        for (List<String> installCommand : alreadyBuilt ? List.<List<String>>of() : runtime.installCommands(plan)) {
            listener.step(name, "installing: " + String.join(" ", installCommand));
            require(machine.execute(Command.of(installCommand.getFirst(), installCommand.subList(1, installCommand.size()).toArray(String[]::new))),
                    "cannot install on " + name + " (" + String.join(" ", installCommand) + ")");
        }
        Optional<String> build = Optional.empty();
        List<String> version = runtime.versionCommand(plan);
        if (!version.isEmpty()) {
            listener.step(name, "reading the build");
            CommandResult printed = machine.execute(Command.reading(version.getFirst(), version.subList(1, version.size()).toArray(String[]::new)));
            build = runtime.build(printed.stdout() + "\n" + printed.stderr());
        }
        if (built.isPresent() && !alreadyBuilt) {
            if (build.isEmpty() && !version.isEmpty()) {
                throw new IllegalStateException(name + ": " + built.get() + " was built but its build cannot be read back ("
                        + String.join(" ", version) + "); it stays the SSH user's and is built again by the next deploy");
            }
            require(machine.execute(Command.sudo(PrivilegedProgram.CHOWN, "-R", "root:wheel", built.get())), "cannot give " + built.get() + " to root");
        }
        checkPorts(machine, plan);
        listener.step(name, "writing the daemons");
        boolean changed = false;
        boolean running = true;
        for (DaemonPlan daemon : plan.daemons()) {
            String plist = LaunchDaemonPlist.render(daemon.daemon());
            machine.upload(stagedPlist(daemon.daemon()), plist.getBytes(StandardCharsets.UTF_8), 0644);
            CommandResult current = machine.execute(Command.reading("cat", daemon.daemon().plistPath()));
            changed |= !current.succeeded() || !current.stdout().equals(plist);
            running &= launchd(machine, daemon.daemon().label()).running();
        }
        return new Staged(name, copies, build, changed, running);
    }

    /**
     * Every port a daemon of the plan listens on must be free on its Mac, or held by a daemon of macfleet's runtimes (which
     * the switch stops): otherwise the deployment is refused before the switch, naming the process that holds it
     * ({@code lsof -nP -iTCP:PORT -sTCP:LISTEN} on the Mac; a process the SSH user may not see is not listed by lsof).
     */
    private void checkPorts(MachineSession machine, MachinePlan plan) {
        java.util.Set<Long> ours = new java.util.HashSet<>();
        for (String label : allLabels) {
            launchd(machine, label).pid().ifPresent(ours::add);
        }
        for (DaemonPlan daemon : plan.daemons()) {
            for (RuntimePlan.Listen listen : daemon.listens()) {
                CommandResult lsof = machine.execute(Command.reading("lsof", "-nP", "-iTCP:" + listen.port(), "-sTCP:LISTEN"));
                for (String line : lsof.stdout().lines().skip(1).toList()) {
                    String[] fields = line.trim().split("\\s+");
                    if (fields.length < 9 || !fields[1].matches("\\d+")) {
                        continue;
                    }
                    String bound = fields[fields.length - 2];
                    String host = bound.contains(":") ? bound.substring(0, bound.lastIndexOf(':')) : bound;
                    long pid = Long.parseLong(fields[1]);
                    if (ours.contains(pid) || !(host.equals("*") || host.equals(listen.address()) || listen.address().equals("0.0.0.0"))) {
                        continue;
                    }
                    throw new RuntimeRefused("port " + listen.port() + " of " + listen.address() + " on " + plan.machine() + " (for "
                            + daemon.daemon().label() + ") is held by " + fields[0] + " (pid " + pid + ", user " + fields[2]
                            + "); nothing was switched: stop that process or choose another port (inference.port, inference.settings.rpcPort)");
                }
            }
        }
    }

    /** Phase two: everything out, then this plan's daemons in by start order, each order ready before the next. */
    public void switchAll(SshRun run, RuntimePlan plan, NodeDeployer.Listener listener) {
        List<String> planned = plan.machines().stream().flatMap(machine -> machine.daemons().stream()).map(daemon -> daemon.daemon().label())
                .distinct().toList();
        failOn(run.onFleet(plan.machines().stream().map(MachinePlan::ssh).toList(), machine -> {
            listener.step(machine.target().machine(), "stopping the old daemons");
            for (String label : allLabels) {
                bootout(machine, label);
                if (!planned.contains(label)) {
                    // A reboot loads every plist in /Library/LaunchDaemons; a disabled one stays down.
                    machine.execute(Command.sudo(PrivilegedProgram.LAUNCHCTL, "disable", "system/" + label));
                }
            }
            return null;
        }), "stopping the old daemons");
        for (int order : plan.startOrders()) {
            List<MachinePlan> starting = plan.machines().stream()
                    .filter(machine -> machine.daemons().stream().anyMatch(daemon -> daemon.startOrder() == order)).toList();
            failOn(run.onFleet(starting.stream().map(MachinePlan::ssh).toList(), machine -> {
                for (DaemonPlan daemon : plan.machine(machine.target().machine()).daemons()) {
                    if (daemon.startOrder() == order) {
                        listener.step(machine.target().machine(), "starting " + daemon.daemon().label());
                        start(machine, daemon.daemon());
                    }
                }
                return null;
            }), "starting the new daemons");
            for (MachinePlan machine : starting) {
                for (DaemonPlan daemon : machine.daemons()) {
                    if (daemon.startOrder() == order) {
                        awaitReady(machine.machine(), daemon.daemon().label(), daemon.readiness());
                    }
                }
            }
        }
        awaitReady(plan.machines().getFirst().machine(), "the cluster", plan.health());
    }

    static void start(MachineSession machine, LaunchDaemon daemon) {
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-o", "root", "-g", "wheel", "-m", "644", stagedPlist(daemon),
                daemon.plistPath())), "cannot install " + daemon.plistPath());
        try {
            Launchctl.enableAndBootstrap(Launchctl.over(machine::execute), daemon.label());
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    static void bootout(MachineSession machine, String label) {
        CommandResult out = machine.execute(Command.sudo(PrivilegedProgram.LAUNCHCTL, "bootout", "system/" + label));
        // 113: not loaded; 3 ("No such process"): older macOS says so for the same.
        if (!out.succeeded() && out.exitStatus() != null && out.exitStatus() != 113 && out.exitStatus() != 3) {
            throw new IllegalStateException("launchctl bootout system/" + label + " failed (exit " + out.exitStatus() + "): " + out.stderr().strip());
        }
    }

    static LaunchdService launchd(MachineSession machine, String label) {
        CommandResult print = machine.execute(Command.reading("launchctl", "print", "system/" + label));
        return LaunchdService.parse(print.exitStatus() == null ? -1 : print.exitStatus(), print.stdout(), print.stderr());
    }

    /** Where a file waits in the SSH user's staging directory (its whole path in the name: two destinations never share one). */
    static String staged(String destination) {
        return STAGING + "/" + destination.substring(1).replace('/', '_');
    }

    /** Whether the file is in place with this SHA-256, root:wheel and this mode: a file the SSH user could change is installed again. */
    private static boolean placed(MachineSession machine, String path, String sha256, int mode) {
        if (!owned(machine, path, "root:wheel " + Integer.toOctalString(mode))) {
            return false;
        }
        CommandResult sum = machine.execute(Command.reading("shasum", "-a", "256", path));
        return sum.succeeded() && sum.stdout().startsWith(sha256 + " ");
    }

    /** Whether {@code stat -f "%Su:%Sg %Lp"} says exactly this ("root:wheel 644"). */
    private static boolean owned(MachineSession machine, String path, String ownerAndMode) {
        CommandResult owner = machine.execute(Command.reading("stat", "-f", "%Su:%Sg %Lp", path));
        return owner.succeeded() && owner.stdout().strip().equals(ownerAndMode);
    }

    /** Root installs the staged copy (checked by the Mac's shasum when it was copied) with root as its owner, then the copy goes. */
    private static void installAsRoot(MachineSession machine, String staged, String destination, int mode) {
        require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-o", "root", "-g", "wheel", "-m", Integer.toOctalString(mode), staged, destination),
                io.macfleet.ssh.ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofHours(1))), "cannot install " + destination);
        require(machine.execute(Command.of("rm", "-f", staged)), "cannot remove the staged " + staged);
    }

    private static String fingerprint(byte[] secret) {
        byte[] salted = new byte[secret.length + 17];
        System.arraycopy("macfleet-secret:\0".getBytes(StandardCharsets.US_ASCII), 0, salted, 0, 17);
        System.arraycopy(secret, 0, salted, 17, secret.length);
        return io.macfleet.deployment.NodeRelease.sha256(salted);
    }

    static String stagedPlist(LaunchDaemon daemon) {
        return STAGING + "/" + daemon.label() + ".plist";
    }

    /** Polls a probe until it answers or the timeout passes; fails naming the daemon and what the probe last saw. */
    void awaitReady(String machine, String what, Probe probe) {
        long deadline = System.nanoTime() + readyTimeout.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            Optional<String> problem = check(probe);
            if (problem.isEmpty()) {
                return;
            }
            last = problem.get();
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new NodeDeployer.DeployFailedException(what + " on " + machine + " was started but did not become ready within "
                + readyTimeout.toSeconds() + " s: " + probe + " last said " + last + " (macfleet node logs " + machine + " shows its log)", true, null);
    }

    static boolean ready(Probe probe) {
        return check(probe).isEmpty();
    }

    /** Empty when the probe answers as a ready daemon does, else what it saw. */
    static Optional<String> check(Probe probe) {
        return switch (probe) {
            case Probe.Tcp tcp -> {
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress(tcp.host(), tcp.port()), 1000);
                    yield Optional.empty();
                } catch (IOException e) {
                    yield Optional.of(e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()));
                }
            }
            case Probe.Http http -> {
                try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()) {
                    HttpResponse<String> response = client.send(HttpRequest.newBuilder(http.uri()).timeout(Duration.ofSeconds(5)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    yield response.statusCode() == 200 ? Optional.empty()
                            : Optional.of("HTTP " + response.statusCode() + " " + abbreviate(response.body().strip()));
                } catch (IOException e) {
                    yield Optional.of(e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    yield Optional.of("interrupted");
                }
            }
        };
    }

    private static String abbreviate(String text) {
        return text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }
}
