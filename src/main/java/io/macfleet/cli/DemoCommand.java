package io.macfleet.cli;

import io.macfleet.command.JsonOption;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.Plan;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.simulator.FaultStep;
import io.macfleet.demo.DemoEnvironment;
import io.quarkus.runtime.Quarkus;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.eclipse.microprofile.config.ConfigProvider;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * `macfleet demo`: simulated Mac Studios, an inventory describing them, and the service, in one command.
 * Its subcommands talk to a running demo over HTTP.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Start simulated Mac Studios (real SSH servers on loopback addresses), write a matching inventory and run the service.",
        subcommands = {DemoCommand.Recovery.class, DemoCommand.Fault.class, DemoCommand.Machines.class, DemoCommand.Reset.class})
public class DemoCommand implements Callable<Integer> {

    @Option(names = "--machines", defaultValue = "4", description = "How many Mac Studios (default ${DEFAULT-VALUE}: half 512 GB, half 256 GB).")
    int machines;

    @Option(names = "--dir", description = "Where the demo keeps its inventory, SSH key, machine state and database (default $MACFLEET_HOME, else ~/.macfleet/demo).")
    Path directory;

    @Option(names = "--ssh-port", defaultValue = "2222", description = "SSH port of every simulated Mac (default ${DEFAULT-VALUE}; 0 = any free port).")
    int sshPort;

    @Option(names = "--base-address", defaultValue = "127.0.0.11", description = "Loopback address of the first Mac; the next get .12, .13, ... (default ${DEFAULT-VALUE}).")
    String baseAddress;

    @Option(names = "--reboot-seconds", defaultValue = "5", description = "How long a simulated reboot keeps SSH away (default ${DEFAULT-VALUE}).")
    int rebootSeconds;

    @Option(names = "--scenario", description = "YAML scenario file: extra cables and faults to apply at start.")
    Path scenario;

    @Option(names = "--nanohub", paramLabel = "PATH", description = "A real NanoHUB binary (micromdm/nanohub) to enroll the Macs in, "
            + "instead of the simulated NanoHUB: started on 127.0.0.1 with file storage under the demo directory.")
    Path nanoHub;

    @Inject
    DesiredStateStore desiredState;

    /** Where the simulator's control API finds this demo. */
    @Inject
    io.macfleet.demo.RunningDemo runningDemo;

    @Inject
    io.macfleet.cabling.ClusterCabling clusterCabling;

    @Inject
    io.macfleet.accounts.AccountService accounts;

    @Inject
    io.macfleet.deployment.NodeService nodes;

    @Inject
    io.macfleet.provision.ProvisioningService provisioning;

    @Inject
    io.macfleet.osupdate.OsUpdateCampaigns campaigns;

    @Option(names = "--no-node", description = "Do not deploy the inference node to the simulated Macs.")
    boolean noNode;

    @Option(names = "--runtime", paramLabel = "RUNTIME", defaultValue = "bundled",
            description = "What serves the first cluster: bundled (the inference node, default) llama.cpp (the real llama-server and"
                    + " ggml-rpc-server, built once by .ci/llama-cpp.sh: about 15 CPU-minutes when the cache is cold) or mlx (the simulator's"
                    + " mlx_lm.server stand-in per rank, with the environment and files mlx.launch gives each rank).")
    String runtime;

    @Inject
    io.macfleet.runtime.RuntimeService runtimes;

    @Inject
    io.macfleet.models.ModelCatalogue models;

    @Option(names = "--as-delivered", description = "Leave the Macs as delivered (RDMA off, bridge on, macOS " + DemoEnvironment.DEMO_MACOS
            + ") instead of provisioning the first cluster and updating its macOS, to do those steps yourself (the README's tour).")
    boolean asDelivered;

    /**
     * Where a demo keeps its state when no {@code --dir} is given: MACFLEET_HOME when it is set, else ~/.macfleet/demo.
     * A demo's directory is the macfleet home of its service (database included), which is why the README's tour
     * points MACFLEET_HOME at it for the CLI; the client commands then find the demo's API token there too.
     */
    static Path defaultDirectory(Map<String, String> environment, String userHome) {
        String home = environment.get("MACFLEET_HOME");
        return home != null && !home.isBlank() ? Path.of(home).toAbsolutePath() : Path.of(userHome, ".macfleet", "demo");
    }

    static Path defaultDirectory() {
        return defaultDirectory(System.getenv(), System.getProperty("user.home"));
    }

    /** The demo directory named by {@code --dir} in a demo command line, else the default one. */
    static Path directory(String... args) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--dir") && i + 1 < args.length) {
                return Path.of(args[i + 1]).toAbsolutePath();
            }
            if (args[i].startsWith("--dir=")) {
                return Path.of(args[i].substring("--dir=".length())).toAbsolutePath();
            }
        }
        return defaultDirectory();
    }

    @Override
    public Integer call() {
        if (!runtime.equals("bundled") && !runtime.equals("llama.cpp") && !runtime.equals("mlx")) {
            throw CommandException.usage("--runtime " + runtime + " is not a runtime the demo runs; expected bundled, llama.cpp or mlx");
        }
        Path dir = directory != null ? directory.toAbsolutePath() : defaultDirectory();
        DemoEnvironment demo;
        try {
            demo = runningDemo.start(new DemoEnvironment.Options(dir, machines, baseAddress, sshPort, Duration.ofSeconds(rebootSeconds), scenario, nanoHub));
        } catch (IllegalArgumentException e) {
            throw CommandException.usage(e.getMessage());
        } catch (IOException | RuntimeException e) {
            throw CommandException.usage("could not start the simulated Macs: " + e.getMessage());
        }
        int httpPort = ConfigProvider.getConfig().getOptionalValue("quarkus.http.port", Integer.class).orElse(8480);
        try {
            LoadResult inventory = InventoryLoader.load(demo.inventoryDirectory());
            if (!inventory.valid()) {
                inventory.errors().forEach(error -> System.err.println(error));
                demo.close();
                throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
            }
            Plan applied = desiredState.apply(inventory.inventory(), io.macfleet.command.Actors.DEMO, demo.inventoryDirectory().toString());
            System.out.println("Inventory applied to the demo database: " + applied.appliedSummary());
            // The demo inventory pins every host key, so nothing is trusted on first use here.
            io.macfleet.cabling.ClusterCabling.Cluster cluster = clusterCabling.cluster(DemoEnvironment.CLUSTER,
                    java.util.Optional.of(io.macfleet.ssh.SshSettings.defaults(io.macfleet.command.Actors.DEMO)
                            .withLimits(io.macfleet.ssh.ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofSeconds(30)))));
            System.out.println("Facts gathered over SSH from " + cluster.facts().size() + " machines. Cabling check of cluster "
                    + DemoEnvironment.CLUSTER + ":");
            System.out.println();
            System.out.println(io.macfleet.cabling.CablingText.text(cluster.check()));
            System.out.println("As delivered, the simulated Studios have RDMA off and the Thunderbolt Bridge on, and run macOS "
                    + DemoEnvironment.DEMO_MACOS + " where the cluster targets " + DemoEnvironment.TARGET_MACOS + " (see macfleet drift).");
            System.out.println();
        } catch (CommandException e) {
            throw e;
        } catch (RuntimeException e) {
            demo.close();
            throw CommandException.checkFailed("could not apply the demo inventory or check it: " + e.getMessage());
        }
        System.out.println(demo.summary(httpPort, !asDelivered));
        try {
            printAccount(accounts.prepareDemo(dir), httpPort);
        } catch (IOException | RuntimeException e) {
            demo.close();
            throw CommandException.checkFailed("could not prepare the demo account: " + e.getMessage());
        }
        System.out.flush();
        java.io.PrintWriter out = new java.io.PrintWriter(System.out, true);
        boolean provisioned = false;
        boolean updated = false;
        if (!asDelivered) {
            // macfleet's main job on the first cluster: provisioned, updated, then serving (below); the rest stay as delivered.
            provisioned = DemoMainJob.provision(provisioning, demo.fleet(), DemoEnvironment.CLUSTER, out);
            updated = provisioned && DemoMainJob.updateMacos(campaigns, DemoEnvironment.CLUSTER, DemoEnvironment.TARGET_MACOS,
                    DemoEnvironment.TARGET_BUILD, out);
        }
        java.util.Optional<String> endpoint = java.util.Optional.empty();
        boolean llamaCpp = "llama.cpp".equals(runtime);
        boolean mlx = "mlx".equals(runtime);
        if (!noNode && !llamaCpp && !mlx) {
            // The Macs pass the model on to each other over their Thunderbolt addresses (model placement), which macfleet
            // reads from the facts as on real Macs: give each cable end its own address first, as the runtimes' demos do.
            demo.fleet().assignThunderboltLoopbackAddresses();
            try {
                clusterCabling.cluster(DemoEnvironment.CLUSTER, java.util.Optional.of(io.macfleet.ssh.SshSettings.defaults(io.macfleet.command.Actors.DEMO)));
            } catch (RuntimeException unread) {
                out.println("The Thunderbolt addresses were not read (" + unread.getMessage() + "); the model goes to each Mac from here.");
            }
            endpoint = io.macfleet.demo.DemoNode.deploy(nodes, models, DemoEnvironment.CLUSTER, dir, out);
        }
        java.util.Optional<io.macfleet.demo.DemoLlamaCpp.Serving> llamaCppServing = java.util.Optional.empty();
        if (!noNode && llamaCpp) {
            try {
                llamaCppServing = io.macfleet.demo.DemoLlamaCpp.deploy(runtimes, desiredState, clusterCabling, demo.fleet(), demo.inventoryDirectory(),
                        DemoEnvironment.CLUSTER, io.macfleet.demo.DemoNode.catalogued(models, dir, out), out);
                endpoint = llamaCppServing.map(io.macfleet.demo.DemoLlamaCpp.Serving::endpoint);
            } catch (IOException e) {
                out.println("llama.cpp was not deployed: " + e.getMessage());
            }
        }
        if (!noNode && mlx) {
            llamaCppServing = io.macfleet.demo.DemoMlx.deploy(runtimes, desiredState, clusterCabling, demo.fleet(), demo.inventoryDirectory(),
                    DemoEnvironment.CLUSTER, dir, out);
            endpoint = llamaCppServing.map(io.macfleet.demo.DemoLlamaCpp.Serving::endpoint);
        }
        if (!asDelivered) {
            out.println(DemoMainJob.conclusion(DemoEnvironment.CLUSTER, provisioned, updated, DemoEnvironment.TARGET_MACOS + " (" + DemoEnvironment.TARGET_BUILD + ")",
                    endpoint, "http://localhost:" + httpPort + "/console"));
        }
        // The last line says what serves (the llama.cpp demo's promise).
        llamaCppServing.ifPresent(serving -> out.println(serving.sentence()));
        try {
            Quarkus.waitForExit();
        } finally {
            demo.close();
        }
        return ExitCodes.OK;
    }

    /** Printed to the terminal only (never logged): the password exists nowhere else but the file of mode 600. */
    private static void printAccount(java.util.Optional<io.macfleet.accounts.AccountService.DemoAccount> account, int httpPort) {
        if (account.isEmpty()) {
            System.out.println("Sign in to the console with one of the accounts in `macfleet users list` (the demo's admin account is gone).");
            return;
        }
        var demoAccount = account.get();
        System.out.println("Console and API: http://localhost:" + httpPort + "/login");
        if (demoAccount.password() != null) {
            System.out.println("  user:       " + demoAccount.user() + " (role admin)");
            System.out.println("  password:   " + demoAccount.password() + "   (also in " + demoAccount.passwordFile() + ", mode 600)");
        } else {
            System.out.println("  user:       " + demoAccount.user() + " (role admin), password in "
                    + (demoAccount.passwordFile() != null ? demoAccount.passwordFile() : "the file written at the demo's first start"));
        }
        System.out.println("  API token:  " + demoAccount.tokenFile() + " (mode 600), sent by `macfleet demo fault|recovery|machines`:");
        System.out.println("              curl -H \"Authorization: Bearer $(cat " + demoAccount.tokenFile() + ")\" http://localhost:" + httpPort
                + "/api/v1/simulator/machines");
        System.out.println();
    }

    /** Shared by the subcommands that talk to a running demo. */
    abstract static class Client {
        @Option(names = "--url", description = "The running demo's HTTP address (default http://localhost:$MACFLEET_HTTP_PORT or 8480).")
        String url;

        @Option(names = "--token-file", paramLabel = "FILE",
                description = "File holding the API token to send (default: $MACFLEET_API_TOKEN if set, else api-token in the demo's directory, "
                        + "written by `macfleet demo`).")
        Path tokenFile;

        @Option(names = "--dir", paramLabel = "DIR",
                description = "The running demo's directory, as given to `macfleet demo --dir` (default $MACFLEET_HOME, else ~/.macfleet/demo): "
                        + "its api-token is sent.")
        Path directory;

        @Mixin
        JsonOption json;

        /** Where the token came from, for the message when the demo refuses it; null when none was sent. */
        private String tokenSource;
        /** Why no token was sent. */
        private String missingToken = "no token given";

        /** The API token the requests carry, or null (the demo then answers 401, and the message says why). */
        private String token() {
            String fromEnvironment = System.getenv("MACFLEET_API_TOKEN");
            if (tokenFile == null && fromEnvironment != null && !fromEnvironment.isBlank()) {
                tokenSource = "the token in MACFLEET_API_TOKEN";
                return fromEnvironment.strip();
            }
            Path file = tokenFile != null ? tokenFile : (directory != null ? directory.toAbsolutePath() : defaultDirectory()).resolve("api-token");
            try {
                tokenSource = "the token in " + file;
                return java.nio.file.Files.readString(file).strip();
            } catch (IOException e) {
                tokenSource = null;
                missingToken = file + " cannot be read (" + (e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.getMessage()) + ")";
                return null;
            }
        }

        private HttpRequest.Builder authorized(HttpRequest.Builder request) {
            String token = token();
            return token == null || token.isEmpty() ? request : request.header("Authorization", "Bearer " + token);
        }

        int post(String path, Object body) {
            return send(authorized(HttpRequest.newBuilder(uri(path))).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json(body))).build());
        }

        int get(String path) {
            return send(authorized(HttpRequest.newBuilder(uri(path))).GET().build());
        }

        private URI uri(String path) {
            String base = url != null ? url : "http://localhost:" + System.getenv().getOrDefault("MACFLEET_HTTP_PORT", "8480");
            return URI.create(base.replaceAll("/+$", "") + "/api/v1/simulator" + path);
        }

        private static String json(Object body) {
            try {
                return new ObjectMapper().writeValueAsString(body);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        private int send(HttpRequest request) {
            try {
                HttpResponse<String> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() >= 400) {
                    // Scripts asked for the answer as it came; people get a sentence.
                    throw CommandException.line(response.statusCode() == 409 ? CommandFailure.Kind.CHECK_FAILED : CommandFailure.Kind.USAGE,
                            json.on() ? response.body() : refusal(response.statusCode(), response.body()));
                }
                if (json.on()) {
                    System.out.println(response.body());
                } else {
                    print(response.body());
                }
                return ExitCodes.OK;
            } catch (IOException e) {
                throw CommandException.line(CommandFailure.Kind.USAGE, "macfleet demo: no running demo at " + request.uri().getScheme() + "://"
                        + request.uri().getAuthority() + " (start one with `macfleet demo`, or give its port with MACFLEET_HTTP_PORT or --url): "
                        + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw CommandException.reported(CommandFailure.Kind.USAGE);
            }
        }

        void print(String body) {
            System.out.println(body);
        }

        /** A refused request in words: the problem's detail (or title), and for 401 and 403 which token was sent. */
        String refusal(int status, String body) {
            String said = null;
            try {
                var problem = new ObjectMapper().readTree(body);
                said = problem.hasNonNull("detail") ? problem.get("detail").asText() : problem.hasNonNull("title") ? problem.get("title").asText() : null;
            } catch (IOException e) {
                // Not a problem document: the status says what happened.
            }
            String what = switch (status) {
                case 401 -> (tokenSource == null ? "the demo wants an API token and none was sent: " + missingToken : "the demo did not accept " + tokenSource)
                        + "; a demo writes a fresh api-token in its directory at each start (give --dir, --token-file or MACFLEET_API_TOKEN)";
                case 403 -> "the account of " + (tokenSource == null ? "no token" : tokenSource) + " may not do this (it needs the operator role)";
                default -> said != null && !said.isBlank() ? said : "refused";
            };
            return "macfleet demo: " + what + " (HTTP " + status + ")";
        }
    }

    @Command(name = "recovery", mixinStandardHelpOptions = true,
            description = "Type a command into a simulated Mac's Recovery Terminal (--enter puts it into Recovery first).")
    static class Recovery extends Client implements Callable<Integer> {
        @Parameters(index = "0", description = "The machine, e.g. studio-02.")
        String machine;

        @Parameters(index = "1", arity = "0..1", description = "What to type, e.g. \"rdma_ctl enable\" or reboot.")
        String command;

        @Option(names = "--enter", description = "Put the machine into Recovery (as holding the power button would).")
        boolean enter;

        @Override
        public Integer call() {
            if (enter) {
                post("/machines/" + machine + "/recovery", Map.of());
                if (command == null) {
                    return ExitCodes.OK;
                }
            }
            if (command == null) {
                throw CommandException.usage("give a command to type, or --enter");
            }
            return post("/machines/" + machine + "/recovery/commands", Map.of("command", command));
        }

        @Override
        void print(String body) {
            try {
                var node = new ObjectMapper().readTree(body);
                if (node.has("output")) {
                    System.out.print(node.get("output").asText());
                    return;
                }
                if (node.has("name") && node.has("power")) {
                    // The answer to --enter: the Mac, now in Recovery.
                    System.out.println(node.get("name").asText() + " is in macOS Recovery (power: " + node.get("power").asText()
                            + "); type into its Terminal with: macfleet demo recovery " + node.get("name").asText() + " \"rdma_ctl enable\"");
                    return;
                }
            } catch (IOException e) {
                // Not the console's answer: show it as it came.
            }
            System.out.println(body);
        }
    }

    @Command(name = "fault", mixinStandardHelpOptions = true,
            description = "Inject a fault into a running demo. Machine faults: " + "hang, hang-connect, slow, drop-connection, garbage, reboot-never-returns, disk-full, "
                    + "crash-loop, daemon-crash, wedge-rdma, host-key-change, reboot, power-off, power-on, recovery, clear. Cable faults (target machine:port): "
                    + "unplug, plug, tb4, tb5, one-sided, rdma-down, move, clear.")
    static class Fault extends Client implements Callable<Integer> {
        @Parameters(index = "0", description = "A machine (studio-02) or a port (studio-01:3).")
        String target;

        @Parameters(index = "1", description = "The fault.")
        String fault;

        @Option(names = "--millis", description = "Delay of 'slow'.")
        Long millis;

        @Option(names = "--daemon", description = "Launch daemon label of 'crash-loop' and 'daemon-crash' (default: the inference node's, "
                + io.macfleet.deployment.NodeLayout.LABEL + ").")
        String daemon;

        @Option(names = "--to", description = "New port of 'move', e.g. studio-01:5.")
        String to;

        @Option(names = "--peer", description = "Far end of 'plug', e.g. studio-02:1.")
        String peer;

        @Override
        public Integer call() {
            boolean port = target.contains(":");
            // The daemon faults are there to try the node's supervision, so they hit the node unless told otherwise.
            String label = daemon == null && (fault.equals("crash-loop") || fault.equals("daemon-crash")) ? io.macfleet.deployment.NodeLayout.LABEL : daemon;
            return post("/faults", new FaultStep(port ? null : target, port ? target : null, fault, millis, label, to, peer));
        }

        @Override
        void print(String body) {
            try {
                var node = new ObjectMapper().readTree(body);
                if (node.has("result")) {
                    System.out.println(target + ": " + node.get("result").asText());
                    return;
                }
            } catch (IOException e) {
                // Not the simulator's answer: show it as it came.
            }
            System.out.println(body);
        }
    }

    @Command(name = "machines", mixinStandardHelpOptions = true, description = "List the simulated Macs of a running demo.")
    static class Machines extends Client implements Callable<Integer> {
        @Override
        public Integer call() {
            return get("/machines");
        }

        @Override
        void print(String body) {
            System.out.print(machinesTable(body));
        }
    }

    @Command(name = "reset", mixinStandardHelpOptions = true,
            description = "Restore a running demo as delivered: every Mac on macOS 26.1 with RDMA off, the Thunderbolt Bridge on, no faults, "
                    + "a fresh file system, and the cables as at start. The service's database (inventory, facts, runs) is kept.")
    static class Reset extends Client implements Callable<Integer> {
        @Override
        public Integer call() {
            return post("/reset", Map.of());
        }

        @Override
        void print(String body) {
            try {
                var node = new ObjectMapper().readTree(body);
                if (node.has("result")) {
                    System.out.println(node.get("result").asText());
                    return;
                }
            } catch (IOException e) {
                // Not the simulator's answer: show it as it came.
            }
            System.out.println(body);
        }
    }

    /** The simulator's machine list as a table for people: one line per Mac. */
    static String machinesTable(String body) {
        com.fasterxml.jackson.databind.JsonNode machines;
        try {
            machines = new ObjectMapper().readTree(body);
        } catch (IOException e) {
            return body + "\n";
        }
        StringBuilder table = new StringBuilder(String.format(java.util.Locale.ROOT, "%-12s %-21s %-9s %-6s %-5s %-6s %-7s %s%n",
                "machine", "ssh", "power", "macOS", "RDMA", "bridge", "memory", "faults"));
        for (var machine : machines) {
            List<String> active = new java.util.ArrayList<>();
            machine.path("faults").fields().forEachRemaining(fault -> {
                var value = fault.getValue();
                if (value.isBoolean() && value.asBoolean() || value.isNumber() && value.asLong() > 0) {
                    active.add(value.isNumber() ? fault.getKey() + " " + value.asLong() : fault.getKey());
                } else if (value.isArray() && !value.isEmpty()) {
                    value.forEach(item -> active.add(fault.getKey() + " " + item.asText()));
                }
            });
            String faults = String.join(", ", active);
            table.append(String.format(java.util.Locale.ROOT, "%-12s %-21s %-9s %-6s %-5s %-6s %4d GB %s%n", machine.path("name").asText(),
                    machine.path("address").asText() + ":" + machine.path("sshPort").asInt() + (machine.path("sshReachable").asBoolean() ? "" : " (down)"),
                    machine.path("power").asText(), machine.path("macosVersion").asText(), machine.path("rdmaEnabled").asBoolean() ? "on" : "off",
                    machine.path("thunderboltBridgeActive").asBoolean() ? "on" : "off", machine.path("memoryGb").asInt(),
                    faults.isEmpty() ? "-" : faults));
        }
        return table.toString();
    }

}
