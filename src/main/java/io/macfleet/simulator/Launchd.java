package io.macfleet.simulator;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The system domain of launchd on one simulated Mac. A bootstrapped daemon is a real child process of the
 * simulator; KeepAlive restarts it, at most once per ThrottleInterval (10 s by default, as launchd does).
 */
public final class Launchd {
    private static final ScheduledExecutorService RESPAWNS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "simulator-launchd");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * Daemons still running when the simulator's JVM ends are killed: on a real Mac they would stop with the machine,
     * and an inference node left behind would hold its ports (it does not end with its parent).
     */
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly), "simulator-launchd-shutdown"));
    }

    /** A launch daemon definition read from its plist. */
    public record Job(String label, String plistPath, List<String> programArguments, boolean keepAlive, boolean runAtLoad,
                      int throttleSeconds, String standardOutPath, String standardErrorPath, boolean disabled, Map<String, String> environment,
                      Optional<String> userName) {
    }

    /** Result of a launchctl operation: what it prints and its exit status. */
    public record Outcome(int exitCode, String stderr) {
        static final Outcome OK = new Outcome(0, "");
    }

    private final class Service {
        final Job job;
        Process process;
        int runs;
        Integer lastExitCode;
        Instant lastStart = Instant.EPOCH;
        boolean removed;
        boolean spawnFailed;

        Service(Job job) {
            this.job = job;
        }
    }

    private final SimulatedMac mac;
    private final Map<String, Service> services = new LinkedHashMap<>();
    private final Set<String> disabledLabels = ConcurrentHashMap.newKeySet();

    Launchd(SimulatedMac mac) {
        this.mac = mac;
    }

    public static Job parse(Path file, String plistPath) throws IOException {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            factory.setExpandEntityReferences(false);
            Element plist = factory.newDocumentBuilder().parse(file.toFile()).getDocumentElement();
            Element dict = firstElement(plist);
            if (dict == null || !dict.getTagName().equals("dict")) {
                throw new IOException("no top-level dict");
            }
            Map<String, Element> entries = new LinkedHashMap<>();
            String key = null;
            for (Node node = dict.getFirstChild(); node != null; node = node.getNextSibling()) {
                if (node instanceof Element element) {
                    if (element.getTagName().equals("key")) {
                        key = element.getTextContent().trim();
                    } else if (key != null) {
                        entries.put(key, element);
                        key = null;
                    }
                }
            }
            String label = text(entries.get("Label"));
            if (label == null || label.isBlank()) {
                throw new IOException("no Label");
            }
            List<String> arguments = new ArrayList<>();
            Element argumentArray = entries.get("ProgramArguments");
            if (argumentArray != null) {
                for (Node node = argumentArray.getFirstChild(); node != null; node = node.getNextSibling()) {
                    if (node instanceof Element element) {
                        arguments.add(element.getTextContent());
                    }
                }
            }
            String program = text(entries.get("Program"));
            if (program != null) {
                if (arguments.isEmpty()) {
                    arguments.add(program);
                } else {
                    arguments.set(0, program);
                }
            }
            if (arguments.isEmpty()) {
                throw new IOException("neither Program nor ProgramArguments");
            }
            Element keepAlive = entries.get("KeepAlive");
            boolean keepAliveOn = keepAlive != null && !keepAlive.getTagName().equals("false");
            Element throttle = entries.get("ThrottleInterval");
            int throttleSeconds = throttle == null ? 10 : Integer.parseInt(throttle.getTextContent().trim());
            Map<String, String> environment = new LinkedHashMap<>();
            Element variables = entries.get("EnvironmentVariables");
            if (variables != null && variables.getTagName().equals("dict")) {
                String name = null;
                for (Node node = variables.getFirstChild(); node != null; node = node.getNextSibling()) {
                    if (node instanceof Element element) {
                        if (element.getTagName().equals("key")) {
                            name = element.getTextContent();
                        } else if (name != null) {
                            environment.put(name, element.getTextContent());
                            name = null;
                        }
                    }
                }
            }
            return new Job(label, plistPath, List.copyOf(arguments), keepAliveOn, isTrue(entries.get("RunAtLoad")), throttleSeconds,
                    text(entries.get("StandardOutPath")), text(entries.get("StandardErrorPath")), isTrue(entries.get("Disabled")),
                    Map.copyOf(environment), Optional.ofNullable(text(entries.get("UserName"))));
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private static Element firstElement(Element parent) {
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element) {
                return element;
            }
        }
        return null;
    }

    private static String text(Element element) {
        return element == null ? null : element.getTextContent().trim();
    }

    private static boolean isTrue(Element element) {
        return element != null && element.getTagName().equals("true");
    }

    /** launchctl bootstrap system PATH. Output strings follow macOS 26 (see SOURCES.md). */
    public synchronized Outcome bootstrap(String plistPath) {
        Path file = mac.resolve(plistPath);
        if (!Files.isRegularFile(file)) {
            return new Outcome(2, "Bootstrap failed: 2: No such file or directory\n");
        }
        Job job;
        try {
            job = parse(file, plistPath);
        } catch (IOException e) {
            return new Outcome(5, "Bootstrap failed: 5: Input/output error\n");
        }
        if (services.containsKey(job.label())) {
            return new Outcome(5, "Bootstrap failed: 5: Input/output error\n");
        }
        if (job.disabled() || disabledLabels.contains(job.label())) {
            return new Outcome(119, "Bootstrap failed: 119: Service is disabled\n");
        }
        Service service = new Service(job);
        services.put(job.label(), service);
        if (job.runAtLoad() || job.keepAlive()) {
            spawn(service);
        }
        return Outcome.OK;
    }

    /** launchctl bootout system/LABEL (or system PATH). */
    public synchronized Outcome bootout(String label) {
        Service service = services.remove(label);
        if (service == null) {
            return new Outcome(113, "Boot-out failed: 113: Could not find specified service\n");
        }
        service.removed = true;
        stop(service);
        return Outcome.OK;
    }

    /** launchctl kickstart [-k] system/LABEL. */
    public synchronized Outcome kickstart(String label, boolean killFirst) {
        Service service = services.get(label);
        if (service == null) {
            return new Outcome(113, "Could not find service \"" + label + "\" in domain for system\n");
        }
        if (service.process != null && service.process.isAlive()) {
            if (!killFirst) {
                return Outcome.OK;
            }
            stop(service);
        }
        spawn(service);
        return Outcome.OK;
    }

    public Outcome enable(String label) {
        disabledLabels.remove(label);
        return Outcome.OK;
    }

    public Outcome disable(String label) {
        disabledLabels.add(label);
        return Outcome.OK;
    }

    /** The label of the plist at this path, for bootout given a path. */
    public Optional<String> labelOf(String plistPath) {
        try {
            return Optional.of(parse(mac.resolve(plistPath), plistPath).label());
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** launchctl print system/LABEL, in launchd's layout (a subset of its fields). */
    public synchronized Optional<String> print(String label) {
        Service service = services.get(label);
        if (service == null) {
            return Optional.empty();
        }
        boolean running = service.process != null && service.process.isAlive();
        StringBuilder out = new StringBuilder();
        out.append("system/").append(label).append(" = {\n");
        out.append("\tactive count = ").append(running ? 1 : 0).append('\n');
        out.append("\tpath = ").append(service.job.plistPath()).append('\n');
        out.append("\ttype = LaunchDaemon\n");
        out.append("\tstate = ").append(running ? "running" : service.spawnFailed ? "spawn failed" : "not running").append("\n\n");
        out.append("\tprogram = ").append(service.job.programArguments().getFirst()).append('\n');
        out.append("\targuments = {\n");
        for (String argument : service.job.programArguments()) {
            out.append("\t\t").append(argument).append('\n');
        }
        out.append("\t}\n\n");
        if (running) {
            out.append("\tpid = ").append(service.process.pid()).append('\n');
        }
        out.append("\truns = ").append(service.runs).append('\n');
        out.append("\tlast exit code = ").append(service.lastExitCode == null ? "(never exited)" : service.lastExitCode).append('\n');
        out.append("\tkeepalive = ").append(service.job.keepAlive() ? "1" : "0").append('\n');
        out.append("}\n");
        return Optional.of(out.toString());
    }

    /**
     * The account the daemon's process runs as: its plist's UserName (launchd runs it as root without one). The
     * simulator's processes all run as the host's user; this is what a Mac would use.
     */
    public synchronized Optional<String> userOf(String label) {
        Service service = services.get(label);
        return service == null ? Optional.empty() : Optional.of(service.job.userName().orElse("root"));
    }

    /** Whether the daemon's process is running now, and its pid. */
    public synchronized Optional<Long> pid(String label) {
        Service service = services.get(label);
        return service != null && service.process != null && service.process.isAlive() ? Optional.of(service.process.pid()) : Optional.empty();
    }

    public synchronized int runs(String label) {
        Service service = services.get(label);
        return service == null ? 0 : service.runs;
    }

    public synchronized List<String> labels() {
        return List.copyOf(services.keySet());
    }

    /** Kills a running daemon as a crash would (SIGKILL); KeepAlive brings it back. */
    public synchronized boolean crash(String label) {
        Service service = services.get(label);
        if (service == null || service.process == null || !service.process.isAlive()) {
            return false;
        }
        service.process.destroyForcibly();
        return true;
    }

    /** At boot launchd loads every plist in /Library/LaunchDaemons. */
    synchronized void bootAll() {
        Path directory = mac.resolve("/Library/LaunchDaemons");
        try (var files = Files.list(directory)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".plist")).sorted().toList()) {
                bootstrap("/Library/LaunchDaemons/" + file.getFileName());
            }
        } catch (IOException e) {
            // An unreadable directory boots with no daemons, as launchd would.
        }
    }

    /** Shutdown: every daemon stops and is unloaded. */
    synchronized void stopAll() {
        // Every daemon is told first, then waited for: they stop together, not one after another.
        for (Service service : services.values()) {
            service.removed = true;
            if (service.process != null) {
                service.process.destroy();
            }
        }
        for (Service service : services.values()) {
            stop(service);
        }
        services.clear();
    }

    private void stop(Service service) {
        Process process = service.process;
        if (process != null && process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(2, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    private void spawn(Service service) {
        if (service.removed) {
            return;
        }
        List<String> command = commandFor(service.job);
        service.runs++;
        service.lastStart = Instant.now();
        if (command == null) {
            service.spawnFailed = true;
            service.lastExitCode = 78;
            scheduleRespawn(service);
            return;
        }
        ProcessBuilder builder = new ProcessBuilder(command).directory(mac.root().toFile());
        // The daemon's EnvironmentVariables, as launchd sets them; values naming directories of the Mac point into it.
        service.job.environment().forEach((name, value) -> {
            Path mapped = value.startsWith("/") && !value.equals("/") ? mac.resolve(value) : null;
            builder.environment().put(name, mapped != null && Files.isDirectory(mapped) ? mapped.toString() : value);
        });
        builder.environment().put("MACFLEET_SIMULATED_ROOT", mac.root().toString());
        libraryPathNextTo(builder, command.getFirst());
        builder.redirectOutput(redirect(service.job.standardOutPath()));
        builder.redirectError(redirect(service.job.standardErrorPath()));
        try {
            Process process = builder.start();
            LIVE.add(process);
            process.onExit().thenRun(() -> LIVE.remove(process));
            service.process = process;
            service.spawnFailed = false;
            process.onExit().thenAccept(exited -> onExit(service, exited));
        } catch (IOException e) {
            service.spawnFailed = true;
            service.lastExitCode = 78;
            scheduleRespawn(service);
        }
    }

    private synchronized void onExit(Service service, Process exited) {
        if (service.process != exited) {
            return;
        }
        service.lastExitCode = exited.exitValue();
        scheduleRespawn(service);
    }

    private void scheduleRespawn(Service service) {
        if (!service.job.keepAlive() || service.removed) {
            return;
        }
        long sinceStart = Duration.between(service.lastStart, Instant.now()).toMillis();
        long delay = Math.max(0, service.job.throttleSeconds() * 1000L - sinceStart);
        RESPAWNS.schedule(() -> {
            synchronized (Launchd.this) {
                if (!service.removed && services.get(service.job.label()) == service
                        && (service.process == null || !service.process.isAlive())) {
                    spawn(service);
                }
            }
        }, delay, TimeUnit.MILLISECONDS);
    }

    /**
     * A program copied onto a Mac finds the shared libraries copied next to it, as macOS builds do through
     * {@code @loader_path} rpaths (a Linux build's RUNPATH may name the directory it was built in instead).
     */
    static void libraryPathNextTo(ProcessBuilder builder, String program) {
        Path directory = Path.of(program).getParent();
        if (directory != null && !directory.toString().startsWith("/bin") && !directory.toString().startsWith("/usr/bin")) {
            builder.environment().put("LD_LIBRARY_PATH", directory.toString());
        }
    }

    private ProcessBuilder.Redirect redirect(String macPath) {
        if (macPath == null) {
            return ProcessBuilder.Redirect.DISCARD;
        }
        try {
            Path file = mac.resolve(macPath);
            Files.createDirectories(file.getParent());
            return ProcessBuilder.Redirect.appendTo(file.toFile());
        } catch (IOException | RuntimeException e) {
            return ProcessBuilder.Redirect.DISCARD;
        }
    }

    /**
     * Maps ProgramArguments onto this machine: a program uploaded into the simulated file system runs from
     * there (through /bin/sh when it is a script without the executable bit), otherwise a program that exists
     * on this machine at the same path runs. A crash-looping fault replaces the program with one that fails.
     */
    private List<String> commandFor(Job job) {
        if (mac.faults().rdmaWedged()) {
            // What exo and MLX users report once the RDMA state is bad (exo #1847): the error, then an exit, in a loop.
            if (job.label().startsWith("io.macfleet.ggml-rpc-server") || job.label().startsWith("io.macfleet.llama-server")) {
                // llama.cpp's RPC transport over RDMA failing (the simulator's wording of an RDMA error line).
                return List.of("/bin/sh", "-c", "echo 'ggml_rpc: RDMA transport error: queue pair to RTR failed (errno 60)' >&2; exit 1");
            }
            return List.of("/bin/sh", "-c", "echo '[jaccl] Changing queue pair to RTR failed with errno 22' >&2; exit 1");
        }
        if (mac.faults().crashLoops(job.label())) {
            return List.of("/bin/sh", "-c", "echo 'simulated crash' >&2; exit 1");
        }
        if (job.userName().isPresent() && !mac.userExists(job.userName().get())) {
            // launchd cannot run a job as an account the Mac does not have: the spawn fails with EX_CONFIG (78).
            return null;
        }
        List<String> arguments = mapArguments(mac, job.programArguments());
        String program = arguments.getFirst();
        Path simulated = program.startsWith("/") ? mac.resolve(program) : null;
        if (simulated != null && Files.isRegularFile(simulated)) {
            if (Files.isExecutable(simulated)) {
                arguments.set(0, mac.faults().programRunFor(simulated).toString());
            } else {
                arguments.set(0, simulated.toString());
                arguments.addFirst("/bin/sh");
            }
            return fileSizeLimited(arguments);
        }
        if (new File(program).canExecute()) {
            return fileSizeLimited(arguments);
        }
        return null;
    }

    /**
     * Arguments naming files of the simulated file system (a jar, a model, a configuration, a secret given as a
     * file: reference) point into it; the program (the first) stays as it is.
     */
    static List<String> mapArguments(SimulatedMac mac, List<String> programArguments) {
        List<String> arguments = new ArrayList<>(programArguments);
        for (int index = 1; index < arguments.size(); index++) {
            String argument = arguments.get(index);
            String prefix = argument.startsWith("file:/") ? "file:" : "";
            String path = argument.substring(prefix.length());
            if (path.startsWith("/") && !path.equals("/")) {
                try {
                    Path mapped = mac.resolve(path);
                    if (Files.exists(mapped)) {
                        arguments.set(index, prefix + mapped);
                    }
                } catch (IllegalArgumentException outside) {
                    // Not a path of this machine: passed as it is.
                }
            }
        }
        return arguments;
    }

    /** A disk that fills during a write (Faults.daemonFileSizeLimitBytes): the daemon runs under sh's ulimit -f (512-byte blocks in dash). */
    private List<String> fileSizeLimited(List<String> arguments) {
        long limit = mac.faults().daemonFileSizeLimitBytes();
        if (limit < 0) {
            return arguments;
        }
        List<String> wrapped = new ArrayList<>(List.of("/bin/sh", "-c", "ulimit -f " + limit / 512 + " && exec \"$@\"", "sh"));
        wrapped.addAll(arguments);
        return wrapped;
    }
}
