package io.macfleet.models.placement;

import io.macfleet.deployment.DiskFree;
import io.macfleet.deployment.LaunchDaemon;
import io.macfleet.deployment.LaunchDaemonPlist;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.NodeLayout;
import io.macfleet.runtime.RuntimeCluster;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.MachineSession;
import io.macfleet.ssh.PrivilegedProgram;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshTarget;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Places files on every Mac of a cluster with the bytes sent once by the control host: survey every Mac (what it holds
 * verified, what its {@code .partial} files hold, {@code df -k}), refuse with the numbers when a disk is too small,
 * start the relay ({@link PlacementRelay}, JDK-only, in a small jar run by the Mac's {@code java}) as a
 * temporary launch daemon on each Mac of the chain, feed the first Mac and let the chain pass the file on over the
 * Thunderbolt addresses, then remove the relays and the placement's key. Independent of CDI, like
 * {@link NodeDeployer}.
 *
 * <p>Rounds: a relay that goes away mid-transfer ({@code kill -9}, a cable pulled) ends the round for the whole chain,
 * every Mac keeping its {@code .partial}; the next round starts from the smallest whole-chunk prefix the Macs hold, so
 * each Mac receives at most about one chunk again. A Mac that is lost in two rounds in a row is given up (failed) and
 * the chain re-forms without it. A full disk or a wrong hash fails that Mac only: it keeps forwarding.
 */
public final class PlacementEngine {
    public static final String LABEL = "io.macfleet.model-placement";
    public static final String DIRECTORY = NodeLayout.HOME + "/placement";
    static final String RELAY = DIRECTORY + "/placement-relay.jar";
    static final String KEY = DIRECTORY + "/placement.key";
    static final String PLIST = DIRECTORY + "/" + LABEL + ".plist";
    static final String STAGED_PLIST = DIRECTORY + "/" + LABEL + ".plist.staged";
    public static final int DEFAULT_PORT = 52417;
    public static final int DEFAULT_CHUNK_BYTES = 8 << 20;

    /**
     * @param port the relays' port (on each Mac's own address; one placement at a time per cluster)
     * @param chunkBytes the resume granularity: a Mac keeps whole chunks of an interrupted {@code .partial}
     * @param relayStartTimeout how long the control host tries to reach the first Mac's relay (its JVM is starting)
     * @param maximumRounds rounds per file before the Macs still missing it are given up
     * @param feedBytesPerSecond at most this rate from the control host (0: as fast as the first Mac takes it), so a
     *                           placement need not fill the management network
     */
    public record Settings(int port, int chunkBytes, Duration relayStartTimeout, int maximumRounds, long feedBytesPerSecond) {
        public Settings {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("placement port " + port + " is not a TCP port (1-65535)");
            }
            if (chunkBytes < RelayClient.BLOCK_BYTES) {
                throw new IllegalArgumentException("placement chunk of " + chunkBytes + " bytes is below the " + RelayClient.BLOCK_BYTES
                        + "-byte block");
            }
            if (maximumRounds < 1) {
                throw new IllegalArgumentException("at least one round");
            }
            if (feedBytesPerSecond < 0) {
                throw new IllegalArgumentException("placement feed rate " + feedBytesPerSecond + " bytes/s is negative");
            }
        }

        public Settings(int port, int chunkBytes, Duration relayStartTimeout, int maximumRounds) {
            this(port, chunkBytes, relayStartTimeout, maximumRounds, 0);
        }

        public static Settings defaults() {
            return new Settings(DEFAULT_PORT, DEFAULT_CHUNK_BYTES, Duration.ofSeconds(60), 5, 0);
        }

        public Settings withPort(int newPort) {
            return new Settings(newPort, chunkBytes, relayStartTimeout, maximumRounds, feedBytesPerSecond);
        }

        public Settings withChunkBytes(int newChunkBytes) {
            return new Settings(port, newChunkBytes, relayStartTimeout, maximumRounds, feedBytesPerSecond);
        }

        public Settings withFeedBytesPerSecond(long newFeedBytesPerSecond) {
            return new Settings(port, chunkBytes, relayStartTimeout, maximumRounds, newFeedBytesPerSecond);
        }
    }

    private final Settings settings;

    public PlacementEngine(Settings settings) {
        this.settings = settings;
    }

    /** What one Mac holds and how it fared. */
    private static final class MacState {
        final RuntimeCluster.Machine machine;
        final Set<String> present = new HashSet<>();
        final Map<String, Long> partial = new LinkedHashMap<>();
        long available;
        boolean everNeeded;
        String failure;
        long written;
        long resent;
        int lostInARow;
        String lostReason;
        List<String> relayArguments;
        /** Per file not held verified: what the survey found instead (for the refusal when this Mac is the source). */
        final Map<String, String> found = new LinkedHashMap<>();
        /** Why the relay cannot run here (no Java 25), when this Mac is the source and needs nothing itself. */
        String javaProblem;

        MacState(RuntimeCluster.Machine machine) {
            this.machine = machine;
        }

        String name() {
            return machine.name();
        }
    }

    /**
     * Places {@code files} on every Mac of {@code machines} (rank order, with their Thunderbolt addresses toward each
     * cabled peer). Throws {@link PlacementRefused} before sending anything when a local file does not match its size,
     * a Mac cannot be surveyed, or a disk is too small; otherwise reports each Mac's outcome.
     */
    public PlacementReport place(SshRun run, String cluster, List<RuntimeCluster.Machine> machines, List<PlacedFile> files,
                                 NodeDeployer.Listener listener) {
        return place(run, cluster, machines, files, Optional.empty(), listener);
    }

    /**
     * As above; with {@code heldOn}, that Mac of the cluster holds the files verified (a model added with
     * {@code --via}) and feeds every chain from its own disk: the chains start at it and this host sends no byte of
     * the files ({@link PlacedFile#localFile()} is not read). Refused before anything is sent when that Mac is not in
     * the cluster or does not hold every file verified (size and its {@code shasum -a 256}).
     */
    public PlacementReport place(SshRun run, String cluster, List<RuntimeCluster.Machine> machines, List<PlacedFile> files,
                                 Optional<String> heldOn, NodeDeployer.Listener listener) {
        long started = System.nanoTime();
        if (machines.isEmpty()) {
            throw new PlacementRefused("cluster " + cluster + " has no machines to place on");
        }
        if (files.isEmpty()) {
            throw new PlacementRefused("nothing to place on " + cluster + ": no files");
        }
        if (heldOn.isPresent() && machines.stream().noneMatch(machine -> machine.name().equals(heldOn.get()))) {
            throw new PlacementRefused("the files are held on " + heldOn.get() + ", which is not a Mac of cluster " + cluster
                    + ": the chain starts at the Mac that holds them, along its cables (nothing was sent)");
        }
        for (PlacedFile file : heldOn.isPresent() ? List.<PlacedFile>of() : files) {
            try {
                long size = Files.size(file.localFile());
                if (size != file.size()) {
                    throw new PlacementRefused(file.localFile() + " is " + size + " bytes, the model says " + file.size()
                            + " for " + file.path() + ": the local copy changed");
                }
            } catch (IOException e) {
                throw new PlacementRefused("cannot read " + file.localFile() + " (" + file.path() + "): " + e.getMessage());
            }
        }
        Map<String, MacState> states = new LinkedHashMap<>();
        machines.forEach(machine -> states.put(machine.name(), new MacState(machine)));
        survey(run, states, files, heldOn, listener);
        heldOn.ifPresent(source -> refuseWhenSourceLacks(cluster, states.get(source), files, states));
        refuseWhenTooSmall(cluster, states, files);
        List<List<String>> chainsTaken = new ArrayList<>();
        long fromControlHost = 0;
        int rounds = 0;
        boolean anyNeeded = states.values().stream().anyMatch(state -> state.everNeeded);
        if (anyNeeded) {
            byte[] key = new byte[32];
            new SecureRandom().nextBytes(key);
            try {
                prepare(run, states, key);
                for (PlacedFile file : files) {
                    FileResult result = placeFile(run, states, file, key, heldOn, listener);
                    fromControlHost += result.bytesSent();
                    rounds += result.rounds();
                    result.chains().forEach(chain -> {
                        if (!chainsTaken.contains(chain)) {
                            chainsTaken.add(chain);
                        }
                    });
                }
                giveToRoot(run, states, files);
            } finally {
                java.util.Arrays.fill(key, (byte) 0);
                cleanUp(run, states);
            }
        }
        List<PlacementReport.MacOutcome> outcomes = new ArrayList<>();
        for (MacState state : states.values()) {
            PlacementReport.Kind kind = state.failure != null ? PlacementReport.Kind.FAILED
                    : state.everNeeded ? PlacementReport.Kind.PLACED : PlacementReport.Kind.ALREADY_PRESENT;
            outcomes.add(new PlacementReport.MacOutcome(state.name(), kind, state.written, state.resent,
                    state.failure != null ? state.failure : kind == PlacementReport.Kind.PLACED ? "placed and verified"
                            : heldOn.filter(state.name()::equals).isPresent() && anyNeeded ? "held it (SHA-256 checked) and fed the chain from its own disk"
                            : "already held it (SHA-256 checked)"));
        }
        long total = files.stream().mapToLong(PlacedFile::size).sum();
        return new PlacementReport(cluster, chainsTaken, outcomes, total, fromControlHost, (System.nanoTime() - started) / 1_000_000, rounds);
    }

    /**
     * The files each Mac verified are root:wheel 644, as node deploy requires before it takes a file as already there
     * (the SSH user must not be able to replace what the node's daemon loads). A Mac where that fails fails with it.
     */
    private static void giveToRoot(SshRun run, Map<String, MacState> states, List<PlacedFile> files) {
        for (MacState state : states.values()) {
            if (!state.everNeeded || state.failure != null) {
                continue;
            }
            for (PlacedFile file : files) {
                CommandResult owned = run.execute(state.machine.ssh(), Command.sudo(PrivilegedProgram.CHOWN, "root:wheel", file.remotePath()));
                if (!owned.succeeded()) {
                    state.failure = "placed " + file.remotePath() + " but could not give it to root: "
                            + (owned.stderr().isBlank() ? "exit " + owned.exitStatus() : owned.stderr().strip());
                }
            }
        }
    }

    /**
     * The Mac that feeds the chains must hold every file verified, and run the relay when any Mac needs a file;
     * otherwise nothing is started.
     */
    private static void refuseWhenSourceLacks(String cluster, MacState source, List<PlacedFile> files, Map<String, MacState> states) {
        List<String> missing = files.stream().filter(file -> !source.present.contains(file.path()))
                .map(file -> file.remotePath() + " (" + source.found.getOrDefault(file.path(), "not verified") + ")").toList();
        if (!missing.isEmpty()) {
            throw new PlacementRefused("the catalogue says " + source.name() + " holds the model, but " + source.name() + " does not hold "
                    + String.join(", ", missing) + " with the catalogue's size and SHA-256: nothing was sent to " + cluster
                    + " (add the model again with --via " + source.name() + ", or without --via to keep it on this host)");
        }
        if (source.javaProblem != null && states.values().stream().anyMatch(state -> state.everNeeded)) {
            throw new PlacementRefused("cannot check the Macs before placing (nothing was sent): " + source.name()
                    + " (which holds the model and feeds the chain): " + source.javaProblem);
        }
    }

    /** Every Mac at once: directories, what it holds (verified by its shasum) and partial files, {@code df -k}. */
    private void survey(SshRun run, Map<String, MacState> states, List<PlacedFile> files, Optional<String> heldOn, NodeDeployer.Listener listener) {
        List<SshTarget> targets = states.values().stream().map(state -> state.machine.ssh()).toList();
        List<MachineResult<Void>> results = run.onFleet(targets, machine -> {
            MacState state = states.get(machine.target().machine());
            listener.step(state.name(), "checking what it holds and its free space");
            // Root's, as node deploy's staging makes it (the relay writes as root; the SSH user only reads here), so
            // the directory's owner is set once and not handed back and forth between a placement and a deploy.
            require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", "root", "-g", "wheel", "-m", "755",
                    NodeLayout.HOME, NodeLayout.MODEL_DIRECTORY)), "cannot create " + NodeLayout.MODEL_DIRECTORY);
            for (PlacedFile file : files) {
                String remote = file.remotePath();
                long[] sizes = machine.withSftp("stat " + remote, sftp -> {
                    var whole = sftp.statExistence(remote);
                    var partial = sftp.statExistence(remote + ".partial");
                    return new long[] {whole == null ? -1 : whole.getSize(), partial == null ? 0 : partial.getSize()};
                });
                if (sizes[0] == file.size()) {
                    CommandResult sum = machine.execute(Command.reading("shasum", "-a", "256", remote),
                            io.macfleet.ssh.ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofHours(2)));
                    if (sum.succeeded() && sum.stdout().startsWith(file.sha256())) {
                        state.present.add(file.path());
                        continue;
                    }
                    state.found.put(file.path(), sum.succeeded() ? "its SHA-256 is " + sum.stdout().strip().split("\\s+")[0]
                            + ", the catalogue's " + file.sha256() : "shasum failed: " + sum.stderr().strip());
                } else {
                    state.found.put(file.path(), sizes[0] < 0 ? "missing" : "it is " + sizes[0] + " bytes, the catalogue says " + file.size());
                }
                if (heldOn.filter(state.name()::equals).isPresent()) {
                    // The source is never written to: what it lacks is a refusal, not something to place.
                    continue;
                }
                long partial = sizes[1];
                state.partial.put(file.path(), partial > file.size() ? 0 : partial == file.size() ? partial : partial / settings.chunkBytes() * settings.chunkBytes());
                state.everNeeded = true;
            }
            if (state.everNeeded) {
                requireJava(machine);
            } else if (heldOn.filter(state.name()::equals).isPresent()) {
                try {
                    requireJava(machine);
                } catch (IllegalStateException noJava) {
                    state.javaProblem = noJava.getMessage();
                }
            }
            CommandResult df = machine.execute(Command.reading("df", "-k", NodeLayout.MODEL_DIRECTORY));
            state.available = DiskFree.availableBytes(df.stdout()).orElseThrow(() -> new IllegalStateException("cannot read the free space of "
                    + NodeLayout.MODEL_DIRECTORY + " from `df -k`: " + (df.stderr().isBlank() ? df.stdout().strip() : df.stderr().strip())));
            return null;
        });
        List<String> failures = results.stream().filter(result -> !result.succeeded())
                .map(result -> result.machine() + ": " + result.error().getMessage()).toList();
        if (!failures.isEmpty()) {
            throw new PlacementRefused("cannot check the Macs before placing (nothing was sent): " + String.join("; ", failures));
        }
    }

    /** The relay is compiled for Java 25, the bundled node's Java ({@code java -version} prints to standard error). */
    private static void requireJava(MachineSession machine) {
        CommandResult version = machine.execute(Command.reading("/usr/bin/java", "-version"));
        String printed = version.stderr() + version.stdout();
        java.util.regex.Matcher feature = java.util.regex.Pattern.compile("version \"(\\d+)").matcher(printed);
        if (!version.succeeded() || !feature.find() || Integer.parseInt(feature.group(1)) < 25) {
            throw new IllegalStateException("the placement relay needs Java 25 or later and `/usr/bin/java -version` answered "
                    + (printed.isBlank() ? "exit " + version.exitStatus() : "'" + printed.strip().lines().findFirst().orElse("") + "'")
                    + "; install a JDK 25 (see docs/inference-deployment.md) or copy the model with node deploy");
        }
    }

    private static void refuseWhenTooSmall(String cluster, Map<String, MacState> states, List<PlacedFile> files) {
        List<String> short_ = new ArrayList<>();
        for (MacState state : states.values()) {
            long needed = files.stream().filter(file -> !state.present.contains(file.path()))
                    .mapToLong(file -> file.size() - state.partial.getOrDefault(file.path(), 0L)).sum();
            if (needed > state.available) {
                short_.add(state.name() + ": " + DiskFree.human(needed) + " (" + needed + " bytes) needed in " + NodeLayout.MODEL_DIRECTORY
                        + ", " + DiskFree.human(state.available) + " (" + state.available + " bytes) available");
            }
        }
        if (!short_.isEmpty()) {
            throw new PlacementRefused("not enough disk space to place on " + cluster + " (nothing was sent): " + String.join("; ", short_));
        }
    }

    /** The relay's jar and the placement's key (mode 600) on every Mac; a relay left by an earlier placement is stopped. */
    private void prepare(SshRun run, Map<String, MacState> states, byte[] key) {
        byte[] relay = RelayJar.bytes();
        List<SshTarget> targets = states.values().stream().map(state -> state.machine.ssh()).toList();
        failOn(run.onFleet(targets, machine -> {
            require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", machine.target().user(), "-m", "700", DIRECTORY)),
                    "cannot create " + DIRECTORY);
            require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-m", "755", NodeLayout.LOG_DIRECTORY)),
                    "cannot create " + NodeLayout.LOG_DIRECTORY);
            bootout(machine);
            machine.upload(RELAY, relay, 0644);
            machine.upload(KEY, key, 0600);
            return null;
        }), "preparing the relays");
    }

    /** Stops the relays and removes their daemon definition, sources and the key from every Mac (best effort, all at once). */
    private static void cleanUp(SshRun run, Map<String, MacState> states) {
        List<SshTarget> targets = states.values().stream().map(state -> state.machine.ssh()).toList();
        run.onFleet(targets, machine -> {
            bootout(machine);
            machine.execute(Command.of("rm", "-f", KEY, RELAY, PLIST, STAGED_PLIST));
            return null;
        });
    }

    private record FileResult(long bytesSent, int rounds, List<List<String>> chains) {
    }

    private FileResult placeFile(SshRun run, Map<String, MacState> states, PlacedFile file, byte[] key, Optional<String> heldOn,
                                 NodeDeployer.Listener listener) {
        long sent = 0;
        int round = 0;
        List<List<String>> chains = new ArrayList<>();
        states.values().forEach(state -> state.lostInARow = 0);
        while (true) {
            Set<String> needing = new java.util.LinkedHashSet<>();
            states.values().stream().filter(state -> state.failure == null && !state.present.contains(file.path()))
                    .forEach(state -> needing.add(state.name()));
            if (needing.isEmpty()) {
                return new FileResult(sent, round, chains);
            }
            if (round >= settings.maximumRounds()) {
                needing.forEach(name -> states.get(name).failure = "did not receive " + file.remotePath() + " in "
                        + settings.maximumRounds() + " rounds; its .partial file is kept for the next placement");
                return new FileResult(sent, round, chains);
            }
            String sourceGone = heldOn.map(states::get).map(source -> source.failure).orElse(null);
            if (sourceGone != null) {
                needing.forEach(name -> states.get(name).failure = "not placed: " + heldOn.get() + ", which holds the model and feeds the chain, failed ("
                        + sourceGone + ")");
                return new FileResult(sent, round, chains);
            }
            round++;
            List<RuntimeCluster.Machine> machines = states.values().stream().filter(state -> state.failure == null).map(state -> state.machine).toList();
            List<List<PlacementChain.Link>> planned = PlacementChain.plan(machines, needing, heldOn);
            Set<String> lost = ConcurrentHashMap.newKeySet();
            for (List<PlacementChain.Link> chain : planned) {
                List<String> names = chain.stream().map(PlacementChain.Link::name).toList();
                chains.add(names);
                listener.step(names.getFirst(), "placing " + file.path() + " along " + String.join(" -> ", names) + " (round " + round + ")");
                startRelays(run, states, chain);
                RelayClient.Outcome outcome = new RelayClient(settings, key, listener).send(chain, file, heldOn.isPresent());
                sent += outcome.bytesSent();
                apply(run, states, file, chain, outcome, lost, heldOn);
            }
            for (MacState state : states.values()) {
                if (lost.contains(state.name())) {
                    if (++state.lostInARow >= 2) {
                        state.failure = "lost twice in a row while placing " + file.remotePath() + " (" + state.lostReason
                                + "); its .partial file is kept for the next placement" + relayLog(run, state);
                    }
                } else {
                    state.lostInARow = 0;
                }
            }
        }
    }

    /** The last lines the Mac's relay wrote to its error log (why it did not answer: a port in use, no Java), if any. */
    private static String relayLog(SshRun run, MacState state) {
        try {
            CommandResult tail = run.execute(state.machine.ssh(), Command.reading("tail", "-n", "3", LaunchDaemon.LOG_DIRECTORY + LABEL + ".err.log"));
            String lines = tail.stdout().strip();
            return tail.succeeded() && !lines.isEmpty() ? "; its relay's log ends: " + String.join(" | ", lines.lines().toList()) : "";
        } catch (RuntimeException unreachable) {
            return "";
        }
    }

    /** Reads what the chain's relays said into each Mac's state; a full disk gets the Mac's {@code df -k} numbers. */
    private void apply(SshRun run, Map<String, MacState> states, PlacedFile file, List<PlacementChain.Link> chain,
                       RelayClient.Outcome outcome, Set<String> lost, Optional<String> heldOn) {
        RelayClient.Report sourceReport = outcome.reports().get(chain.getFirst().name());
        if (sourceReport != null && sourceReport.kind() == RelayClient.Kind.SOURCE) {
            // The survey found the file verified there moments ago; it went away or changed since: no Mac can get it now.
            states.get(chain.getFirst().name()).failure = "could not feed the chain from its copy: " + sourceReport.detail();
            return;
        }
        for (PlacementChain.Link link : chain) {
            MacState state = states.get(link.name());
            RelayClient.Report report = outcome.reports().get(link.name());
            if (report == null || !link.store()) {
                if (outcome.lost().containsKey(link.name())) {
                    lost.add(link.name());
                    state.lostReason = outcome.lost().get(link.name());
                }
                continue;
            }
            switch (report.kind()) {
                case DONE -> {
                    state.present.add(file.path());
                    state.written += report.written();
                    state.resent += report.resent();
                }
                case DISK -> state.failure = diskFailure(run, state, file, report);
                case HASH -> state.failure = "the SHA-256 of " + file.remotePath() + " as received is " + report.detail() + ", expected "
                        + file.sha256() + (heldOn.isPresent() ? " (fed from " + heldOn.get() + "'s copy, whose shasum matched before the round)"
                        : localCopyChanged(file)) + "; removed " + file.remotePath() + ".partial, nothing renamed into place";
                case SOURCE -> {
                    // Only a chain's first Mac reports it, handled above.
                }
            }
        }
        outcome.lost().forEach((name, reason) -> {
            MacState state = states.get(name);
            if (state != null && state.failure == null) {
                lost.add(name);
                state.lostReason = reason;
            }
        });
    }

    /**
     * Hashed only after a Mac found a mismatch (hashing every placement here would cost the control host a pass over
     * the model): says so when this host's own copy no longer matches the model.
     */
    private final Map<Path, String> localHashes = new ConcurrentHashMap<>();

    private String localCopyChanged(PlacedFile file) {
        String local = localHashes.computeIfAbsent(file.localFile(), path -> {
            try {
                return io.macfleet.deployment.NodeRelease.sha256(path);
            } catch (IOException e) {
                return "unreadable (" + e.getMessage() + ")";
            }
        });
        return local.equals(file.sha256()) ? "" : " (the control host's copy " + file.localFile() + " hashes to " + local + ": it changed since it was catalogued)";
    }

    private static String diskFailure(SshRun run, MacState state, PlacedFile file, RelayClient.Report report) {
        String free;
        try {
            CommandResult df = run.execute(state.machine.ssh(), Command.reading("df", "-k", NodeLayout.MODEL_DIRECTORY));
            free = DiskFree.availableBytes(df.stdout()).stream().mapToObj(bytes -> DiskFree.human(bytes) + " (" + bytes + " bytes)").findFirst()
                    .orElse("an unreadable amount");
        } catch (RuntimeException e) {
            free = "an unknown amount (df -k failed: " + e.getMessage() + ")";
        }
        return "writing " + file.remotePath() + ".partial failed at byte " + report.written() + " of " + file.size() + " ("
                + report.detail() + "); df -k shows " + free + " available in " + NodeLayout.MODEL_DIRECTORY
                + "; removed the partial file, nothing renamed into place";
    }

    /** Each relay of the chain runs with this chain's addresses: (re)installed only where they changed. */
    private void startRelays(SshRun run, Map<String, MacState> states, List<PlacementChain.Link> chain) {
        Map<String, List<String>> wanted = new LinkedHashMap<>();
        for (PlacementChain.Link link : chain) {
            List<String> argv = new ArrayList<>(List.of("/usr/bin/java", "-XX:+UseSerialGC", "-Xmx128m", "-jar", RELAY, "--name", link.name(),
                    "--listen", link.listenAddress(), "--port", Integer.toString(settings.port()), "--key", KEY, "--root", NodeLayout.MODEL_DIRECTORY));
            link.upstreamAddress().ifPresent(from -> argv.addAll(List.of("--from", from)));
            if (!argv.equals(states.get(link.name()).relayArguments)) {
                wanted.put(link.name(), argv);
            }
        }
        if (wanted.isEmpty()) {
            return;
        }
        List<SshTarget> targets = wanted.keySet().stream().map(name -> states.get(name).machine.ssh()).toList();
        failOn(run.onFleet(targets, machine -> {
            List<String> argv = wanted.get(machine.target().machine());
            bootout(machine);
            LaunchDaemon daemon = new LaunchDaemon(LABEL, argv, Map.of(), DIRECTORY, true, true, 1,
                    LaunchDaemon.LOG_DIRECTORY + LABEL + ".out.log", LaunchDaemon.LOG_DIRECTORY + LABEL + ".err.log", 256);
            machine.upload(STAGED_PLIST, LaunchDaemonPlist.render(daemon).getBytes(StandardCharsets.UTF_8), 0644);
            // launchd takes a daemon's plist only from a file root owns; it stays out of /Library/LaunchDaemons, so
            // nothing starts the relay again at boot.
            require(machine.execute(Command.sudo(PrivilegedProgram.INSTALL, "-o", "root", "-g", "wheel", "-m", "644", STAGED_PLIST, PLIST)),
                    "cannot install " + PLIST);
            require(machine.execute(Command.sudo(PrivilegedProgram.LAUNCHCTL, "enable", "system/" + LABEL)), "launchctl enable system/" + LABEL);
            require(machine.execute(Command.sudo(PrivilegedProgram.LAUNCHCTL, "bootstrap", "system", PLIST)), "launchctl bootstrap system " + PLIST);
            states.get(machine.target().machine()).relayArguments = argv;
            return null;
        }), "starting the relays");
    }

    private static void bootout(MachineSession machine) {
        CommandResult out = machine.execute(Command.sudo(PrivilegedProgram.LAUNCHCTL, "bootout", "system/" + LABEL));
        // 113: not loaded; 3 ("No such process"): older macOS says so for the same.
        if (!out.succeeded() && out.exitStatus() != null && out.exitStatus() != 113 && out.exitStatus() != 3) {
            throw new IllegalStateException("launchctl bootout system/" + LABEL + " failed (exit " + out.exitStatus() + "): " + out.stderr().strip());
        }
    }

    private static void require(CommandResult result, String what) {
        if (!result.succeeded()) {
            throw new IllegalStateException(what + " (exit " + result.exitStatus() + "): "
                    + (result.stderr().isBlank() ? result.stdout().strip() : result.stderr().strip()));
        }
    }

    private static void failOn(List<MachineResult<Void>> results, String what) {
        List<String> failures = results.stream().filter(result -> !result.succeeded())
                .map(result -> result.machine() + ": " + result.error().getMessage()).toList();
        if (!failures.isEmpty()) {
            throw new IllegalStateException(what + " failed: " + String.join("; ", failures));
        }
    }
}
