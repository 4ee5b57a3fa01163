package io.macfleet.runtime;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.Finding;
import io.macfleet.cabling.MachineCablingFacts;
import io.macfleet.cabling.PeerConfiguration;
import io.macfleet.deployment.DaemonAccount;
import io.macfleet.deployment.LaunchDaemon;
import io.macfleet.deployment.NodeRelease;
import io.macfleet.inventory.InferenceSettings;
import io.macfleet.runtime.RuntimePlan.DaemonPlan;
import io.macfleet.runtime.RuntimePlan.Listen;
import io.macfleet.runtime.RuntimePlan.MachinePlan;
import io.macfleet.runtime.RuntimePlan.Probe;
import io.macfleet.runtime.RuntimePlan.StagedFile;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MLX: {@code python3 -m mlx_lm.server} on every Mac, one LaunchDaemon per rank (launchd keeps each alive, which
 * {@code mlx.launch} over SSH does not), each with exactly the environment and files {@code mlx.launch} would give that
 * rank ({@link MlxLaunchContract} holds the rules, with the mlx source lines they come from). mlx_lm.server initializes
 * {@code mx.distributed.init()} (backend "any": ring, then mpi, then jaccl, whichever finds its environment), loads the
 * model sharded ({@code --pipeline} for pipeline parallelism, otherwise tensor) and only rank 0 serves HTTP; the other
 * ranks wait in the generation loop. The model directory (safetensors, config.json, tokenizer) is copied to every Mac.
 */
public final class MlxRuntime implements InferenceRuntime {

    public static final String NAME = "mlx";
    public static final String LABEL = "io.macfleet.mlx-lm-server";
    /**
     * With {@code settings.apiKey}: the bundled node's jar as an authenticating reverse proxy on rank 0 (mlx_lm.server
     * has no API key option), on the management address and the cluster's port, forwarding to mlx_lm.server on loopback.
     */
    public static final String PROXY_LABEL = "io.macfleet.mlx-lm-proxy";
    /** Where rank 0 keeps the API key the proxy checks (mode 600). */
    public static final String API_KEY_FILE = "/usr/local/macfleet/mlx/api-key";
    public static final String HOME = "/usr/local/macfleet/mlx";
    /**
     * The directory of each pinned pair's virtual environment: one per (mlx, mlx-lm) pair, so that an upgrade installs
     * the new versions beside the ones serving and a rollback finds the old ones untouched.
     */
    public static String venv(String mlxVersion, String mlxLmVersion) {
        return HOME + "/venv-mlx-" + mlxVersion + "-mlx-lm-" + mlxLmVersion;
    }
    public static final String MODEL_DIRECTORY = "/usr/local/macfleet/models";
    /** mlx.launch's --starting-port default (launch.py:508-512): the JACCL coordinator port, and the ring's first port. */
    public static final int DEFAULT_COORDINATOR_PORT = 32323;
    /** In each rank's environment: rank 0's GET /v1/models, the readiness of every rank (read back by {@link #probe}). */
    static final String MODELS_URL = "MACFLEET_MLX_READY_URL";

    /** "mlx 0.29.3 mlx-lm 0.28.2", what {@link #versionCommand} prints. */
    private static final Pattern VERSION = Pattern.compile("mlx (\\S+) mlx-lm (\\S+)");

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "MLX: mlx_lm.server on every Mac, one rank each, over JACCL (RDMA on a full Thunderbolt mesh) or the ring backend";
    }

    @Override
    public List<String> labels() {
        return List.of(LABEL, PROXY_LABEL);
    }

    /** The proxy first: every rank's readiness is rank 0's answer through it. */
    @Override
    public List<String> startOrder() {
        return List.of(PROXY_LABEL, LABEL);
    }

    @Override
    public List<String> versionCommand(MachinePlan machine) {
        return versionCommand(machine.daemons().getFirst().daemon()).orElseThrow();
    }

    /** The versions in the venv whose python3 the daemon runs (its first program argument). */
    @Override
    public Optional<List<String>> versionCommand(LaunchDaemon installed) {
        String python = installed.programArguments().getFirst();
        if (!installed.label().equals(LABEL) || !python.endsWith("/bin/python3")) {
            return Optional.empty();
        }
        return Optional.of(List.of(python, "-c", "import importlib.metadata as m; print('mlx', m.version('mlx'), 'mlx-lm', m.version('mlx-lm'))"));
    }

    @Override
    public Optional<String> build(String versionOutput) {
        Matcher matcher = VERSION.matcher(versionOutput);
        return matcher.find() ? Optional.of("mlx " + matcher.group(1) + ", mlx-lm " + matcher.group(2)) : Optional.empty();
    }

    /** The venv the install commands build (as the SSH user); root's once its versions were read back. */
    @Override
    public Optional<String> builtDirectory(MachinePlan machine) {
        String python = machine.daemons().getFirst().daemon().programArguments().getFirst();
        return Optional.of(python.substring(0, python.length() - "/bin/python3".length()));
    }

    /** A virtual environment from the Mac's own python3, then the pinned packages (from the index, or the wheels copied). */
    @Override
    public List<List<String>> installCommands(MachinePlan machine) {
        String python = machine.daemons().getFirst().daemon().programArguments().getFirst();
        String venv = python.substring(0, python.length() - "/bin/python3".length());
        List<String> pip = new ArrayList<>(List.of(python, "-m", "pip", "install", "--disable-pip-version-check"));
        machine.files().stream().map(StagedFile::destination).filter(path -> path.startsWith(HOME + "/wheels/")).findFirst()
                .ifPresent(wheel -> pip.addAll(List.of("--no-index", "--find-links", HOME + "/wheels")));
        String versions = machine.daemons().getFirst().daemon().environment().getOrDefault("MACFLEET_MLX_PACKAGES", "");
        pip.addAll(List.of(versions.split(" ")));
        return List.of(List.of("/usr/bin/python3", "-m", "venv", venv), pip);
    }

    /**
     * What MLX prints when its RDMA transport fails: JACCL's queue-pair errors (errno 22 EINVAL, 60 ETIMEDOUT;
     * rdma.cpp "Changing queue pair to RTR failed with errno"), the side channel's "Couldn't connect" (utils.cpp /
     * tcp.cpp), and a segmentation fault in the RDMA library (exo #1847, #1973, #2111; mlx #4319).
     */
    @Override
    public List<Pattern> rdmaFaultLines() {
        return MlxFaults.LINES;
    }

    @Override
    public Optional<Probe> probe(LaunchDaemon installed) {
        if (installed.label().equals(PROXY_LABEL)) {
            // The proxy is up when it accepts; whether mlx_lm.server behind it answers is the ranks' probe.
            String listen = after(installed.programArguments(), "--listen").orElse("127.0.0.1:8080");
            return Optional.of(new Probe.Tcp(listen.substring(0, listen.lastIndexOf(':')), Integer.parseInt(listen.substring(listen.lastIndexOf(':') + 1))));
        }
        if (!installed.label().equals(LABEL)) {
            return Optional.empty();
        }
        // Every rank is up when the group serves, and only rank 0 answers HTTP: each rank's plist names rank 0's models URL.
        String models = installed.environment().get(MODELS_URL);
        if (models != null) {
            return Optional.of(new Probe.Http(URI.create(models)));
        }
        List<String> arguments = installed.programArguments();
        return Optional.of(new Probe.Http(URI.create("http://" + after(arguments, "--host").orElse("127.0.0.1") + ":"
                + after(arguments, "--port").orElse("8080") + "/v1/models")));
    }

    private static Optional<String> after(List<String> arguments, String option) {
        int index = arguments.indexOf(option);
        return index >= 0 && index + 1 < arguments.size() ? Optional.of(arguments.get(index + 1)) : Optional.empty();
    }

    @Override
    public RuntimePlan plan(RuntimeCluster cluster) {
        String mlxVersion = required(cluster, "mlxVersion");
        String mlxLmVersion = required(cluster, "mlxLmVersion");
        MlxModel model = MlxModel.of(cluster.model().orElseThrow(() -> new RuntimeRefused("cluster " + cluster.name()
                + ": no model: give --model DIRECTORY (an MLX model: config.json and safetensors) or set inference.model")));
        ClusterCabling.Cluster cabling = cluster.cabling().orElseThrow(() -> new RuntimeRefused("cluster " + cluster.name()
                + ": no cabling facts are stored; the MLX runtime takes its device matrix and ring addresses from them: run macfleet facts, then"
                + " macfleet cabling check " + cluster.name()));
        CablingReport report = cabling.check();
        PeerConfiguration peers = PeerConfiguration.from(report, cabling.facts());
        String backend = chosenBackend(cluster, report);
        if (backend.startsWith("jaccl")) {
            // A missing device is named with its Mac and port first; then whatever else fails the check for a mesh.
            deviceMatrix(cluster, cluster.machines(), peers, cabling.facts());
        }
        refuseUnfit(cluster, report, backend);
        int port = cluster.setting("coordinatorPort", Number.class).map(Number::intValue).orElse(DEFAULT_COORDINATOR_PORT);
        List<RuntimeCluster.Machine> ranks = backend.equals("ring") ? ringRanks(cluster, report) : cluster.machines();
        RuntimeCluster.Machine head = ranks.getFirst();
        Map<String, Map<String, String>> environments = new LinkedHashMap<>();
        Map<String, List<String>> hostfileRows = new LinkedHashMap<>();
        String sharedFile;
        String sharedVariable;
        if (backend.startsWith("jaccl")) {
            List<List<String>> matrix = deviceMatrix(cluster, ranks, peers, cabling.facts());
            sharedVariable = "MLX_IBV_DEVICES";
            sharedFile = MlxLaunchContract.deviceFile(matrix);
            for (int rank = 0; rank < ranks.size(); rank++) {
                environments.put(ranks.get(rank).name(), MlxLaunchContract.jacclEnvironment(rank, head.managementAddress(), port,
                        HOME + "/ibv-devices.json", backend.equals("jaccl-ring")));
            }
        } else {
            sharedVariable = "MLX_HOSTFILE";
            List<List<String>> ips = new ArrayList<>();
            for (int rank = 0; rank < ranks.size(); rank++) {
                RuntimeCluster.Machine machine = ranks.get(rank);
                RuntimeCluster.Machine left = ranks.get(Math.floorMod(rank - 1, ranks.size()));
                List<PeerConfiguration.PeerLink> links = peers.between(machine.name(), left.name());
                String address = machine.thunderboltAddresses().get(left.name());
                if (address == null && !links.isEmpty()) {
                    address = links.getFirst().localAddress();
                }
                if (address == null) {
                    throw new RuntimeRefused("ring backend: " + machine.name() + " has no Thunderbolt address toward " + left.name()
                            + " (its left neighbour in the ring " + ranks.stream().map(RuntimeCluster.Machine::name).toList() + "); cable them and"
                            + " configure the point-to-point addresses (macfleet cabling config " + cluster.name() + " --format mlx-ring shows them)");
                }
                ips.add(List.of(address));
            }
            sharedFile = MlxLaunchContract.ringHostfile(ips, port);
            for (int rank = 0; rank < ranks.size(); rank++) {
                environments.put(ranks.get(rank).name(), MlxLaunchContract.ringEnvironment(rank, HOME + "/hostfile.json"));
            }
        }
        String modelPath = MODEL_DIRECTORY + "/" + model.digest().substring(0, 12) + "-" + model.directory().getFileName();
        List<StagedFile> modelFiles = model.files().stream().map(file -> new StagedFile(modelPath + "/" + model.directory().relativize(file.path()),
                new StagedFile.Source.LocalFile(file.path()), Optional.of(file.sha256()), file.size(), 0644)).toList();
        List<StagedFile> wheels = MlxModel.wheels(cluster.setting("wheels", String.class)).stream()
                .map(file -> new StagedFile(HOME + "/wheels/" + file.path().getFileName(), new StagedFile.Source.LocalFile(file.path()),
                        Optional.of(file.sha256()), file.size(), 0644)).toList();
        int httpPort = cluster.inference().port();
        Optional<String> apiKey = cluster.setting("apiKey", String.class);
        // With a key, mlx_lm.server answers on loopback only, behind the proxy on the cluster's port.
        int upstreamPort = httpPort + 1 == port ? httpPort + 2 : httpPort + 1;
        // The proxy's /health (no key) when there is one: 200 when mlx_lm.server behind it answers /v1/models.
        String readyUrl = "http://" + head.managementAddress() + ":" + httpPort + (apiKey.isPresent() ? "/health" : "/v1/models");
        Optional<StagedFile> proxyJar = apiKey.map(reference -> proxyJar(cluster));
        boolean pipeline = cluster.inference().parallelism() == InferenceSettings.Parallelism.PIPELINE;
        @SuppressWarnings("unchecked")
        Map<String, Object> extra = cluster.setting("environment", Map.class).orElse(Map.of());
        List<MachinePlan> machines = new ArrayList<>();
        for (int rank = 0; rank < ranks.size(); rank++) {
            RuntimeCluster.Machine machine = ranks.get(rank);
            Map<String, String> environment = new LinkedHashMap<>();
            // The hostfile's "envs" and --env first, then the files, then MLX_RANK: the order of launch.py:133-150.
            extra.forEach((name, value) -> environment.put(name, String.valueOf(value)));
            environment.putAll(environments.get(machine.name()));
            environment.put("MACFLEET_CLUSTER", cluster.name());
            environment.put("MACFLEET_RUNTIME", NAME);
            environment.put("MACFLEET_MLX_PACKAGES", "mlx==" + mlxVersion + " mlx-lm==" + mlxLmVersion);
            environment.put("MACFLEET_MODEL_SHA256", model.digest());
            environment.put(MODELS_URL, readyUrl);
            // mlx_lm.server binds --host (127.0.0.1 by default, server.py:1732-1737); only rank 0 serves (server.py:1714-1717).
            List<String> arguments = new ArrayList<>(List.of(venv(mlxVersion, mlxLmVersion) + "/bin/python3", "-m", "mlx_lm.server", "--model", modelPath,
                    "--host", rank == 0 && apiKey.isPresent() ? "127.0.0.1" : machine.managementAddress(),
                    "--port", Integer.toString(rank == 0 && apiKey.isPresent() ? upstreamPort : httpPort)));
            if (pipeline) {
                arguments.add("--pipeline");
            }
            LaunchDaemon daemon = LaunchDaemon.node(LABEL, arguments, environment, HOME).runAs(DaemonAccount.NAME);
            List<StagedFile> files = new ArrayList<>(modelFiles);
            files.addAll(wheels);
            byte[] content = sharedFile.getBytes(StandardCharsets.UTF_8);
            files.add(new StagedFile(environment.get(sharedVariable), new StagedFile.Source.Content(sharedFile),
                    Optional.of(NodeRelease.sha256(content)), content.length, 0644));
            // Every rank is ready when the group serves: the ranks start together (JACCL's side channel and the ring wait for
            // each other) and only rank 0 answers HTTP, once every rank joined.
            Probe readiness = new Probe.Http(URI.create(readyUrl));
            List<Listen> listens = new ArrayList<>();
            if (rank == 0) {
                listens.add(apiKey.isPresent() ? new Listen("127.0.0.1", upstreamPort) : new Listen(machine.managementAddress(), httpPort));
                if (backend.startsWith("jaccl")) {
                    listens.add(new Listen(machine.managementAddress(), port));
                }
            }
            if (backend.equals("ring")) {
                String own = MlxLaunchContract.ringAddresses(sharedFile).get(rank).getFirst();
                listens.add(new Listen(own.substring(0, own.lastIndexOf(':')), Integer.parseInt(own.substring(own.lastIndexOf(':') + 1))));
            }
            List<String> directories = new ArrayList<>(List.of(HOME, MODEL_DIRECTORY, modelPath));
            model.subdirectories().forEach(sub -> directories.add(modelPath + "/" + sub));
            if (!wheels.isEmpty()) {
                directories.add(HOME + "/wheels");
            }
            List<DaemonPlan> daemons = new ArrayList<>(List.of(new DaemonPlan(daemon, apiKey.isPresent() ? 1 : 0, listens, readiness)));
            if (rank == 0 && apiKey.isPresent()) {
                files.add(proxyJar.orElseThrow());
                files.add(new StagedFile(API_KEY_FILE, new StagedFile.Source.Secret(apiKey.get()), Optional.empty(), -1, 0600));
                daemons.add(new DaemonPlan(proxyDaemon(cluster, proxyJar.get().destination(), machine.managementAddress(), httpPort, upstreamPort), 0,
                        List.of(new Listen(machine.managementAddress(), httpPort)), new Probe.Tcp(machine.managementAddress(), httpPort)));
            }
            machines.add(new MachinePlan(machine.name(), rank, rank == 0 ? "rank 0: mlx_lm.server, serves HTTP" + (apiKey.isPresent()
                    ? " behind the API-key proxy" : "") : "rank " + rank + ": mlx_lm.server", machine.ssh(), directories, files, daemons));
        }
        String endpoint = "http://" + head.managementAddress() + ":" + httpPort + "/v1";
        List<String> notes = new ArrayList<>();
        if (backend.equals("ring") && cluster.setting("backend", String.class).isEmpty()) {
            notes.add("backend ring (TCP over the Thunderbolt ring) because the cluster fails the cabling check for jaccl: "
                    + String.join("; ", report.findings().stream().filter(finding -> finding.severity() == Finding.Severity.ERROR)
                    .limit(3).map(Finding::message).toList()) + " (set inference.settings.backend to choose)");
        }
        notes.addFirst("backend " + backend + (backend.equals("ring") ? " over the ring " + ranks.stream().map(RuntimeCluster.Machine::name).toList()
                : ", coordinator " + head.managementAddress() + ":" + port) + "; " + (pipeline ? "pipeline (--pipeline)" : "tensor") + " parallelism over "
                + ranks.size() + " ranks");
        notes.add("model " + model.directory() + ": " + model.files().size() + " files, copied to " + modelPath + " on every Mac");
        if (apiKey.isPresent()) {
            notes.add("API key: from " + apiKey.get() + " into " + API_KEY_FILE + " (mode 600) on " + head.name() + "; " + PROXY_LABEL
                    + " (inference-node proxy) answers " + endpoint + " with Authorization: Bearer and forwards to mlx_lm.server on 127.0.0.1:"
                    + upstreamPort + " (mlx_lm.server has no API key option)");
        } else {
            notes.add("no API key: mlx_lm.server has no option for one (server.py main()); " + endpoint
                    + " answers anyone who reaches rank 0's management address (set inference.settings.apiKey to put an authenticating proxy in front)");
        }
        return new RuntimePlan(NAME, cluster.name(), "mlx " + mlxVersion + ", mlx-lm " + mlxLmVersion, machines, endpoint,
                new Probe.Http(URI.create(readyUrl)), notes);
    }

    /** The bundled node's jar, copied to rank 0 beside the venvs (named by its hash, so an upgrade lands beside the old one). */
    private static StagedFile proxyJar(RuntimeCluster cluster) {
        java.nio.file.Path jar = cluster.nodeJar().orElseGet(io.macfleet.deployment.NodeService::defaultNodeJar);
        try {
            String sha256 = NodeRelease.sha256(jar);
            return new StagedFile(HOME + "/inference-node-" + sha256.substring(0, 12) + ".jar", new StagedFile.Source.LocalFile(jar),
                    Optional.of(sha256), java.nio.file.Files.size(jar), 0644);
        } catch (java.io.IOException e) {
            throw new RuntimeRefused("cluster " + cluster.name() + ": inference.settings.apiKey needs the node's jar for the proxy: cannot read "
                    + jar + ": " + e.getMessage());
        }
    }

    /** {@code inference-node proxy} on rank 0's management address (never a wildcard), the key named by path only. */
    private static LaunchDaemon proxyDaemon(RuntimeCluster cluster, String jar, String managementAddress, int httpPort, int upstreamPort) {
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put("MACFLEET_CLUSTER", cluster.name());
        environment.put("MACFLEET_RUNTIME", NAME);
        return LaunchDaemon.node(PROXY_LABEL, List.of("/usr/bin/java", "-Xmx128m", "-jar", jar, "proxy",
                "--listen", managementAddress + ":" + httpPort, "--to", "127.0.0.1:" + upstreamPort, "--api-key", "file:" + API_KEY_FILE),
                environment, HOME).runAs(DaemonAccount.NAME);
    }

    private static String required(RuntimeCluster cluster, String setting) {
        return cluster.setting(setting, String.class).orElseThrow(() -> new RuntimeRefused("cluster " + cluster.name()
                + ": inference.settings." + setting + " is missing; the MLX runtime pins the same mlx and mlx-lm versions on every Mac"));
    }

    /**
     * jaccl when asked, or by default when the cluster passes the cabling check; ring when asked, or by default when the
     * check fails and a ring through every Mac exists (the plan's first note says so).
     */
    static String chosenBackend(RuntimeCluster cluster, CablingReport report) {
        boolean passes = report.findings().stream().noneMatch(finding -> finding.severity() == Finding.Severity.ERROR);
        return cluster.setting("backend", String.class).orElse(passes || report.ringOrder().isEmpty() ? "jaccl" : "ring");
    }

    private static void refuseUnfit(RuntimeCluster cluster, CablingReport report, String chosen) {
        List<Finding> errors = report.findings().stream().filter(finding -> finding.severity() == Finding.Severity.ERROR).toList();
        if (chosen.startsWith("jaccl") && !errors.isEmpty()) {
            String listed = String.join("; ", errors.stream().limit(5).map(Finding::message).toList());
            throw new RuntimeRefused("cluster " + cluster.name() + " fails the cabling check, which backend " + chosen + " needs (a full mesh"
                    + " with RDMA on every port): " + errors.size() + " errors: " + listed + ". "
                    + (report.ringOrder().isPresent() ? "The ring backend would work over the ring " + report.ringOrder().get()
                    + ": set inference.settings.backend: ring, or fix the findings (macfleet cabling check " + cluster.name() + ")"
                    : "No Thunderbolt ring through every Mac either: fix the findings (macfleet cabling check " + cluster.name() + ")"));
        }
        if (chosen.equals("ring") && report.ringOrder().isEmpty()) {
            throw new RuntimeRefused("cluster " + cluster.name() + " has no Thunderbolt ring through every Mac (" + report.verdict()
                    + "), which backend ring needs: fix the cabling (macfleet cabling check " + cluster.name() + ")");
        }
    }

    /** The ring order of the cabling check, turned so that the head (rank 0, which serves HTTP) comes first. */
    private static List<RuntimeCluster.Machine> ringRanks(RuntimeCluster cluster, CablingReport report) {
        List<String> order = report.ringOrder().orElseThrow();
        int start = Math.max(0, order.indexOf(cluster.head().name()));
        List<RuntimeCluster.Machine> ranks = new ArrayList<>();
        for (int index = 0; index < order.size(); index++) {
            String name = order.get((start + index) % order.size());
            cluster.machines().stream().filter(machine -> machine.name().equals(name)).findFirst().ifPresent(ranks::add);
        }
        if (ranks.size() != cluster.machines().size()) {
            throw new RuntimeRefused("cluster " + cluster.name() + ": the ring " + order + " does not pass through every Mac of the cluster "
                    + cluster.machines().stream().map(RuntimeCluster.Machine::name).toList());
        }
        return ranks;
    }

    /**
     * Row i, column j: the RDMA device on rank i's Mac whose port is cabled to rank j's Mac (rdma_ plus the port's
     * interface, as mlx.distributed_config names it, config.py:476); null on the diagonal. A device the Mac does not list
     * (ibv_devices) is refused, naming the Mac and its port.
     */
    private static List<List<String>> deviceMatrix(RuntimeCluster cluster, List<RuntimeCluster.Machine> ranks, PeerConfiguration peers,
                                                   List<MachineCablingFacts> facts) {
        List<List<String>> matrix = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (RuntimeCluster.Machine machine : ranks) {
            List<String> row = new ArrayList<>();
            Optional<List<String>> devices = facts.stream().filter(fact -> fact.machine().equals(machine.name())).findFirst()
                    .flatMap(MachineCablingFacts::rdmaDevices);
            for (RuntimeCluster.Machine peer : ranks) {
                if (peer == machine) {
                    row.add(null);
                    continue;
                }
                List<PeerConfiguration.PeerLink> links = peers.between(machine.name(), peer.name());
                if (links.isEmpty()) {
                    // A missing cable is the cabling check's finding (refused with the others, and the ring suggested).
                    row.add(null);
                    continue;
                }
                PeerConfiguration.PeerLink link = links.getFirst();
                if (devices.isEmpty() || !devices.get().contains(link.rdmaDevice())) {
                    problems.add(machine.name() + " Thunderbolt port " + link.port() + " (" + link.networkInterface() + ", toward " + peer.name()
                            + "): no RDMA device " + link.rdmaDevice() + (devices.isEmpty() ? " (ibv_devices was not gathered)"
                            : " among " + devices.get()) + "; enable RDMA (rdma_ctl enable in macOS Recovery) and check the cable");
                }
                row.add(link.rdmaDevice());
            }
            matrix.add(row);
        }
        if (!problems.isEmpty()) {
            throw new RuntimeRefused("cluster " + cluster.name() + ": JACCL's device matrix cannot be written: " + String.join("; ", problems));
        }
        return matrix;
    }
}
