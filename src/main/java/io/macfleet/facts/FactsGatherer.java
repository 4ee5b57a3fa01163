package io.macfleet.facts;

import io.macfleet.ssh.Command;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.MachineSession;
import io.macfleet.ssh.SshException;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshTarget;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Gathers the facts of machines over SSH: every command is a read (retried once when the connection drops),
 * every output is parsed. A machine's facts exist when every command answered and every essential output parsed
 * (what identifies the machine and its cabling: software version, hardware, Thunderbolt, ports, interfaces, RDMA,
 * memory, disk); an optional fact ({@link #OPTIONAL_FACTS}) whose output does not parse is recorded as unreadable
 * and costs only itself.
 */
public final class FactsGatherer {

    public static final Command SOFTWARE_VERSION = Command.reading("sw_vers");
    public static final Command HARDWARE = Command.reading("system_profiler", "-json", "SPHardwareDataType");
    public static final Command DISPLAYS = Command.reading("system_profiler", "-json", "SPDisplaysDataType");
    public static final Command THUNDERBOLT = Command.reading("system_profiler", "SPThunderboltDataType", "-json");
    public static final Command HARDWARE_PORTS = Command.reading("networksetup", "-listallhardwareports");
    public static final Command IFCONFIG = Command.reading("ifconfig");
    public static final Command RDMA_STATUS = Command.reading("rdma_ctl", "status");
    public static final Command RDMA_DEVICES = Command.reading("ibv_devices");
    /**
     * Port state of each RDMA device: ibv_devices lists every rdma_enN whether or not its cable works. Exits 255 with
     * "No IB devices found" when RDMA is off, and does not exist before macOS 26.2: then no states are recorded
     * (empty output), which is not an error.
     */
    public static final Command RDMA_PORTS = Command.reading("ibv_devinfo");
    public static final Command BOOTSTRAP_TOKEN = Command.reading("profiles", "status", "-type", "bootstraptoken");
    public static final Command MEMORY = Command.reading("sysctl", "hw.memsize");
    public static final Command UPTIME = Command.reading("uptime");
    /**
     * How much memory the GPU may wire, in MiB: {@code iogpu.wired_limit_mb: 0} when unset (macOS's default share).
     * The name exists from macOS 14 on; before, sysctl exits 1 ("unknown oid"), recorded as empty output (not gathered).
     */
    public static final Command WIRED_LIMIT = Command.reading("sysctl", "iogpu.wired_limit_mb");
    public static final Command DISK_FREE = Command.reading("df", "-k", "/");

    /** Every command, in the order they are sent. */
    public static final List<Command> COMMANDS = List.of(SOFTWARE_VERSION, HARDWARE, DISPLAYS, THUNDERBOLT, HARDWARE_PORTS, IFCONFIG,
            RDMA_STATUS, RDMA_DEVICES, RDMA_PORTS, BOOTSTRAP_TOKEN, MEMORY, WIRED_LIMIT, UPTIME, DISK_FREE);

    public static final String BOOTSTRAP_TOKEN_FACT = "bootstrap token";
    public static final String RDMA_PORTS_FACT = "RDMA port states";
    public static final String UPTIME_FACT = "uptime";
    public static final String WIRED_LIMIT_FACT = "GPU wired limit";

    /**
     * Facts a machine's other facts never depend on, by name, with the command that reads each: nothing about
     * identity, cabling or readiness is decided from them alone, so an output macfleet cannot read (a new macOS
     * wording, a broken tool) must not hide the rest of the machine.
     */
    public static final Map<String, Command> OPTIONAL_FACTS = optionalFacts();

    private static Map<String, Command> optionalFacts() {
        Map<String, Command> facts = new LinkedHashMap<>();
        facts.put(BOOTSTRAP_TOKEN_FACT, BOOTSTRAP_TOKEN);
        facts.put(RDMA_PORTS_FACT, RDMA_PORTS);
        facts.put(UPTIME_FACT, UPTIME);
        facts.put(WIRED_LIMIT_FACT, WIRED_LIMIT);
        return java.util.Collections.unmodifiableMap(facts);
    }

    private final Clock clock;

    public FactsGatherer(Clock clock) {
        this.clock = clock;
    }

    /**
     * Gathers every target in parallel (the run's parallelism); one result per target, in target order. Ports
     * cabled between machines of the same gathering name their peer machine and port.
     */
    public List<MachineResult<FactsObservation>> gather(SshRun run, List<SshTarget> targets) {
        return gather(run, targets, List.of());
    }

    /**
     * As {@link #gather(SshRun, List)}, and ports cabled to one of {@code others} (the latest stored facts of machines
     * not gathered now) name that peer too: gathering one Mac alone still says which Mac its cables go to.
     */
    public List<MachineResult<FactsObservation>> gather(SshRun run, List<SshTarget> targets, java.util.Collection<MachineFacts> others) {
        List<MachineResult<FactsObservation>> results = run.onFleet(targets, this::gather);
        return identifyPeers(results, others);
    }

    /**
     * Channels used at the same time on one machine's connection. OpenSSH allows 10 sessions per connection
     * (MaxSessions) by default; a few at a time already hide most of the round trips.
     */
    static final int CHANNELS_PER_MACHINE = 4;

    /**
     * Gathers one machine, a few commands at a time over its one connection; throws {@link FactsGatheringException}
     * naming the first command (in {@link #COMMANDS} order) that failed. The machine has one deadline: reaching it
     * within the connect timeout, then every command (retries included) within one command timeout together. A hung
     * machine therefore costs one timeout, not one per command or per wave of commands.
     */
    public FactsObservation gather(MachineSession session) {
        String machine = session.target().machine();
        try {
            session.connect();
        } catch (SshException failure) {
            // Reaching the machine is the first part of sending the first command; reported as before, under it.
            throw new FactsGatheringException(machine, COMMANDS.getFirst().render(), failure.reason(), failure);
        }
        ExecutionLimits limits = session.limits();
        long deadline = System.nanoTime() + limits.commandTimeout().toNanos();
        Map<Command, Future<String>> running = new LinkedHashMap<>();
        Semaphore channels = new Semaphore(CHANNELS_PER_MACHINE);
        Map<String, String> outputs = new LinkedHashMap<>();
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
        try {
            for (Command command : COMMANDS) {
                running.put(command, threads.submit(() -> {
                    if (!channels.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                        throw pastDeadline(machine, command, limits);
                    }
                    try {
                        long remaining = deadline - System.nanoTime();
                        if (remaining <= 0) {
                            throw pastDeadline(machine, command, limits);
                        }
                        io.macfleet.ssh.CommandResult result = session.execute(command, limits.withCommandTimeout(Duration.ofNanos(remaining)));
                        // ibv_devinfo exits non-zero when RDMA is off or absent (before macOS 26.2): no port states, not a failed gathering.
                        // sysctl exits 1 for a name the macOS lacks (iogpu.wired_limit_mb before macOS 14): not gathered, not a failure.
                        boolean noDevices = (command == RDMA_PORTS || command == WIRED_LIMIT) && result.exitStatus() != null
                                && result.exitStatus() != 0 && result.exitSignal() == null;
                        return noDevices ? "" : result.requireSuccess().stdout();
                    } finally {
                        channels.release();
                    }
                }));
            }
            for (Map.Entry<Command, Future<String>> entry : running.entrySet()) {
                String rendered = entry.getKey().render();
                try {
                    // A little grace past the deadline: the command's own timeout ends it first and says so.
                    long wait = Math.max(0, deadline - System.nanoTime()) + DEADLINE_GRACE.toNanos();
                    outputs.put(rendered, entry.getValue().get(wait, TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof FactsGatheringException failure) {
                        throw failure;
                    }
                    if (e.getCause() instanceof SshException failure) {
                        throw new FactsGatheringException(machine, rendered, failure.reason(), failure);
                    }
                    throw new FactsGatheringException(machine, rendered, String.valueOf(e.getCause()), e.getCause());
                } catch (TimeoutException e) {
                    throw pastDeadline(machine, entry.getKey(), limits);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FactsGatheringException(machine, COMMANDS.getFirst().render(), "interrupted before every command answered", e);
        } finally {
            // Never waits: commands still running end by their own timeout, and the run closes their connection.
            threads.shutdownNow();
        }
        return new FactsObservation(parse(machine, clock.instant(), outputs), outputs);
    }

    /** How long past the machine's deadline the gatherer waits for a command's own timeout to report. */
    private static final Duration DEADLINE_GRACE = Duration.ofMillis(500);

    private static FactsGatheringException pastDeadline(String machine, Command command, ExecutionLimits limits) {
        // Said as the command's own timeout says it: which of the two noticed first is a race, the fact is the same.
        return new FactsGatheringException(machine, command.render(), "did not finish within the command timeout of "
                + limits.commandTimeout().toMillis() + " ms (one deadline for all the machine's commands together)", null);
    }

    /**
     * Builds the facts from the command outputs (keyed by {@link Command#render()}): every essential output is
     * required, an optional one that is missing or unreadable is named in {@link MachineFacts#unreadableFacts()}.
     */
    public static MachineFacts parse(String machine, Instant observedAt, Map<String, String> outputs) {
        Map<String, String> unreadable = new LinkedHashMap<>();
        SoftwareVersion version = parse(machine, outputs, SOFTWARE_VERSION, SimpleOutputParsers::softwareVersion);
        HardwareOverview hardware = parse(machine, outputs, HARDWARE, HardwareParser::parse);
        int gpuCores = parse(machine, outputs, DISPLAYS, HardwareParser::gpuCores);
        ThunderboltFacts thunderbolt = thunderbolt(machine, outputs);
        HardwarePorts ports = hardwarePorts(machine, outputs);
        List<NetworkInterface> interfaces = parse(machine, outputs, IFCONFIG, SystemOutputParsers::interfaces);
        boolean bridgeActive = parse(machine, outputs, IFCONFIG, SimpleOutputParsers::bridgeActive);
        boolean rdmaEnabled = parse(machine, outputs, RDMA_STATUS, SimpleOutputParsers::rdmaEnabled);
        List<String> rdmaDevices = parse(machine, outputs, RDMA_DEVICES, SimpleOutputParsers::rdmaDevices);
        BootstrapTokenStatus token = optional(machine, outputs, BOOTSTRAP_TOKEN_FACT, BootstrapTokenStatus::parse, unreadable)
                .orElse(new BootstrapTokenStatus(false, false));
        // Read only to know whether it can be read; the cabling check parses it again from the stored output.
        optional(machine, outputs, RDMA_PORTS_FACT, SimpleOutputParsers::rdmaPortStates, unreadable);
        optional(machine, outputs, WIRED_LIMIT_FACT, SimpleOutputParsers::wiredLimitMegabytes, unreadable);
        long memory = parse(machine, outputs, MEMORY, SimpleOutputParsers::memorySize);
        long uptime = optional(machine, outputs, UPTIME_FACT, SystemOutputParsers::uptime, unreadable).map(Duration::toSeconds).orElse(0L);
        long freeDisk = parse(machine, outputs, DISK_FREE, SystemOutputParsers::freeDiskBytes);
        return new MachineFacts(machine, observedAt, hardware.modelIdentifier(), hardware.modelName(), hardware.chip(),
                hardware.cpuCores(), boxed(hardware.performanceCores()), boxed(hardware.efficiencyCores()), gpuCores, memory,
                hardware.serialNumber(), hardware.hardwareUuid(), version.productVersion(), version.buildVersion(),
                thunderboltPorts(thunderbolt, ports), interfaces, bridgeActive, rdmaEnabled, rdmaDevices,
                token.supportedOnServer(), token.escrowed(), uptime, freeDisk, unreadable);
    }

    /** An optional fact: empty, with the reason recorded under its name, when its output is missing or unreadable. */
    private static <T> Optional<T> optional(String machine, Map<String, String> outputs, String fact, Function<String, T> parser,
                                            Map<String, String> unreadable) {
        Command command = OPTIONAL_FACTS.get(fact);
        if (!outputs.containsKey(command.render()) && (command == RDMA_PORTS || command == WIRED_LIMIT)) {
            // Observations stored before ibv_devinfo or the wired limit was gathered: not captured, which is not an error.
            return Optional.empty();
        }
        try {
            return Optional.of(parse(machine, outputs, command, parser));
        } catch (FactsGatheringException e) {
            unreadable.put(fact, "`" + command.render() + "`: " + e.reason());
            return Optional.empty();
        }
    }

    /** The Thunderbolt buses and peers in stored command output; the one place that output is parsed. */
    public static ThunderboltFacts thunderbolt(String machine, Map<String, String> outputs) {
        return parse(machine, outputs, THUNDERBOLT, ThunderboltParser::parse);
    }

    /** The hardware ports (port to interface) in stored command output; the one place that output is parsed. */
    public static HardwarePorts hardwarePorts(String machine, Map<String, String> outputs) {
        return parse(machine, outputs, HARDWARE_PORTS, HardwarePortsParser::parse);
    }

    /**
     * The RDMA port states (device to PORT_ACTIVE, PORT_DOWN, ...) in stored output; empty when the observation
     * predates this command.
     */
    public static Optional<Map<String, String>> rdmaPortStates(String machine, Map<String, String> outputs) {
        return outputs.containsKey(RDMA_PORTS.render())
                ? Optional.of(parse(machine, outputs, RDMA_PORTS, SimpleOutputParsers::rdmaPortStates)) : Optional.empty();
    }

    /**
     * {@code iogpu.wired_limit_mb} in stored output: 0 when the Mac keeps macOS's default share; empty when the
     * observation predates this command or the Mac's macOS lacks the setting.
     */
    public static java.util.OptionalLong wiredLimitMegabytes(String machine, Map<String, String> outputs) {
        return outputs.containsKey(WIRED_LIMIT.render())
                ? parse(machine, outputs, WIRED_LIMIT, SimpleOutputParsers::wiredLimitMegabytes) : java.util.OptionalLong.empty();
    }

    private static <T> T parse(String machine, Map<String, String> outputs, Command command, Function<String, T> parser) {
        String output = outputs.get(command.render());
        if (output == null) {
            throw new FactsGatheringException(machine, command.render(), "no output recorded", null);
        }
        try {
            return parser.apply(output);
        } catch (FactsParseException e) {
            throw new FactsGatheringException(machine, command.render(), e.getMessage(), e);
        } catch (RuntimeException e) {
            // A parser bug must still end up as this machine's error, never as a crash of the whole run.
            throw new FactsGatheringException(machine, command.render(), "unreadable output (" + e + ")", e);
        }
    }

    private static Integer boxed(OptionalInt value) {
        return value.isPresent() ? value.getAsInt() : null;
    }

    private static List<MachineFacts.ThunderboltPort> thunderboltPorts(ThunderboltFacts thunderbolt, HardwarePorts ports) {
        List<MachineFacts.ThunderboltPort> result = new ArrayList<>();
        for (ThunderboltBus bus : thunderbolt.buses()) {
            if (bus.receptacle().isEmpty()) {
                continue;
            }
            int port = bus.receptacle().getAsInt();
            Optional<ThunderboltDevice> peer = bus.directPeerHost();
            result.add(new MachineFacts.ThunderboltPort(port, ports.thunderboltInterface(port).orElse(null),
                    bus.domainUuid().orElse(null), bus.connected(),
                    bus.speed().map(LinkSpeed::gigabitsPerSecond).orElse(null),
                    peer.map(ThunderboltDevice::deviceName).orElse(null),
                    peer.flatMap(ThunderboltDevice::domainUuid).orElse(null), null, null,
                    bus.otherDevices().stream().map(ThunderboltDevice::describe).toList()));
        }
        result.sort(java.util.Comparator.comparingInt(MachineFacts.ThunderboltPort::port));
        return result;
    }

    /**
     * Names the peer machine and port of every cable whose far end was gathered in the same run, or is among
     * {@code others} (older facts of machines not gathered now; what was gathered now wins).
     */
    static List<MachineResult<FactsObservation>> identifyPeers(List<MachineResult<FactsObservation>> results, java.util.Collection<MachineFacts> others) {
        Map<String, MachineFacts.ThunderboltPort> portsByDomain = new HashMap<>();
        Map<String, String> machineByDomain = new HashMap<>();
        for (MachineFacts other : others) {
            other.thunderboltPorts().stream().filter(port -> port.domainUuid() != null).forEach(port -> {
                portsByDomain.put(port.domainUuid(), port);
                machineByDomain.put(port.domainUuid(), other.machine());
            });
        }
        for (MachineResult<FactsObservation> result : results) {
            result.valueIfSucceeded().ifPresent(observation -> observation.facts().thunderboltPorts().stream()
                    .filter(port -> port.domainUuid() != null)
                    .forEach(port -> {
                        portsByDomain.put(port.domainUuid(), port);
                        machineByDomain.put(port.domainUuid(), observation.machine());
                    }));
        }
        List<MachineResult<FactsObservation>> identified = new ArrayList<>(results.size());
        for (MachineResult<FactsObservation> result : results) {
            if (!result.succeeded()) {
                identified.add(result);
                continue;
            }
            FactsObservation observation = result.value();
            MachineFacts facts = observation.facts();
            List<MachineFacts.ThunderboltPort> ports = facts.thunderboltPorts().stream()
                    .map(port -> port.peerDomainUuid() != null && portsByDomain.containsKey(port.peerDomainUuid())
                            ? port.withPeer(machineByDomain.get(port.peerDomainUuid()), portsByDomain.get(port.peerDomainUuid()).port())
                            : port)
                    .toList();
            MachineFacts withPeers = new MachineFacts(facts.machine(), facts.observedAt(), facts.modelIdentifier(), facts.modelName(),
                    facts.chip(), facts.cpuCores(), facts.performanceCores(), facts.efficiencyCores(), facts.gpuCores(), facts.memoryBytes(),
                    facts.serialNumber(), facts.hardwareUuid(), facts.macosVersion(), facts.macosBuild(), ports, facts.interfaces(),
                    facts.thunderboltBridgeActive(), facts.rdmaEnabled(), facts.rdmaDevices(), facts.bootstrapTokenSupportedOnServer(),
                    facts.bootstrapTokenEscrowed(), facts.uptimeSeconds(), facts.freeDiskBytes(), facts.unreadableFacts());
            identified.add(new MachineResult<>(result.machine(), new FactsObservation(withPeers, observation.outputs()), null, result.duration()));
        }
        return identified;
    }
}
