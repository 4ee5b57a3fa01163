package io.macfleet.simulator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.sshd.common.util.threads.CloseableExecutorService;
import org.apache.sshd.common.util.threads.ThreadUtils;

/**
 * A fleet of simulated Mac Studios, each with a real SSH server on its own loopback address, wired together by a
 * {@link Cabling}. This is the Java API tests and the demo drive: build it, {@link #start()}, then change cables,
 * power, Recovery and faults while clients talk SSH to the machines.
 */
public final class SimulatedFleet implements AutoCloseable {

    /** Where one simulated Mac's SSH server listens. */
    public record Endpoint(String name, String host, int port) {
    }

    private final Path stateDirectory;
    private final String sshUser;
    private final List<PublicKey> authorizedKeys = new CopyOnWriteArrayList<>();
    private final Duration rebootDuration;
    private final MacosRelease latestRelease;
    private final Cabling cabling = new Cabling();
    private final Map<String, SimulatedProgram> programs;
    private final FaultKinds faultKinds;
    private final Map<String, SimulatedMac> machines = new LinkedHashMap<>();
    private final Map<String, MacSshServer> servers = new LinkedHashMap<>();
    private final CloseableExecutorService sharedIo = ThreadUtils.newCachedThreadPool("simulator-io");
    private final ScheduledExecutorService sharedTimers = Executors.newScheduledThreadPool(1, r -> {
        Thread thread = new Thread(r, "simulator-timers");
        thread.setDaemon(true);
        return thread;
    });

    private SimulatedFleet(Builder builder) {
        this.stateDirectory = builder.stateDirectory;
        this.sshUser = builder.sshUser;
        this.authorizedKeys.addAll(builder.authorizedKeys);
        this.rebootDuration = builder.rebootDuration;
        this.latestRelease = builder.latestRelease;
        this.programs = SimulatedPrograms.byName(builder.programs);
        this.faultKinds = builder.faultKinds;
        boolean distinctAddresses = loopbackAliasesWork(builder.baseAddress);
        int index = 0;
        for (Builder.Machine machine : builder.machines) {
            String host = distinctAddresses ? offset(builder.baseAddress, index) : "127.0.0.1";
            int port = builder.basePort == 0 ? 0 : (distinctAddresses ? builder.basePort : builder.basePort + index);
            if (machines.containsKey(machine.spec().name())) {
                throw new IllegalArgumentException("two simulated Macs are named " + machine.spec().name());
            }
            SimulatedMac mac = new SimulatedMac(machine.spec(), host, stateDirectory.resolve(machine.spec().name()), machine.release(),
                    builder.volumeOwnerUser, builder.volumeOwnerPassword, builder.sshUser);
            mac.setRdmaEnabled(machine.rdmaEnabled());
            machines.put(mac.name(), mac);
            servers.put(mac.name(), new MacSshServer(this, mac, host, port, sharedIo, sharedTimers));
            index++;
        }
    }

    /** The program a machine runs for this name (argv[0] without directory), or null: zsh's "command not found". */
    SimulatedProgram program(String name) {
        return programs.get(name);
    }

    public static Builder builder(Path stateDirectory) {
        return new Builder(stateDirectory);
    }

    /** Starts every machine's SSH server (in parallel) and boots its launch daemons. */
    public SimulatedFleet start() {
        try (ExecutorService starters = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> started = new ArrayList<>();
            for (SimulatedMac mac : machines.values()) {
                started.add(starters.submit(() -> {
                    powerOnNow(mac);
                    return null;
                }));
            }
            for (Future<?> future : started) {
                future.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the simulated fleet", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("a simulated Mac failed to start: " + e.getCause().getMessage(), e.getCause());
        }
        return this;
    }

    @Override
    public void close() {
        for (SimulatedMac mac : machines.values()) {
            servers.get(mac.name()).stop();
            mac.launchd().stopAll();
            mac.setPower(PowerState.OFF);
        }
        sharedTimers.shutdownNow();
        sharedIo.shutdownNow();
    }

    public Cabling cabling() {
        return cabling;
    }

    public Collection<SimulatedMac> machines() {
        return machines.values();
    }

    public SimulatedMac machine(String name) {
        SimulatedMac mac = machines.get(name);
        if (mac == null) {
            throw new IllegalArgumentException("no simulated Mac named '" + name + "' (known: " + machines.keySet() + ")");
        }
        return mac;
    }

    public Endpoint endpoint(String name) {
        MacSshServer server = servers.get(machine(name).name());
        return new Endpoint(name, server.host(), server.port());
    }

    public List<Endpoint> endpoints() {
        return machines.keySet().stream().map(this::endpoint).toList();
    }

    public String sshUser() {
        return sshUser;
    }

    public List<PublicKey> authorizedKeys() {
        return authorizedKeys;
    }

    public void authorize(PublicKey key) {
        authorizedKeys.add(key);
    }

    /** The host key file of a machine (OpenSSH PEM), e.g. to pin its fingerprint in a test. */
    public Path hostKeyFile(String name) {
        return servers.get(machine(name).name()).hostKeyFile();
    }

    /** SHA256 fingerprint of a machine's host key, as OpenSSH prints it ("SHA256:..."). */
    public String hostKeyFingerprint(String name) {
        try {
            java.security.KeyPair pair = new org.apache.sshd.server.keyprovider.SimpleGeneratorHostKeyProvider(hostKeyFile(name))
                    .loadKeys(null).iterator().next();
            return org.apache.sshd.common.config.keys.KeyUtils.getFingerPrint(pair.getPublic());
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot read the host key of " + name + " (is it started?)", e);
        }
    }

    /**
     * Cables every pair of Macs with Thunderbolt 5 (at most 6 Macs: the five RDMA-capable ports each), following
     * {@link MeshCabling#fullMesh(java.util.List)}.
     */
    public List<String> cableFullMesh() {
        return cableFullMesh(new ArrayList<>(machines.keySet()));
    }

    /** Cables every pair of these Macs (at most 6) with Thunderbolt 5, following {@link MeshCabling#fullMesh}. */
    public List<String> cableFullMesh(List<String> names) {
        if (names.size() < 2) {
            return List.of();
        }
        // Cabled as a person would (MeshCabling: same port number on both Macs, port 1 free), with the simulator's
        // own plan, not the product's, so a simulated mesh checks the product's cabling check instead of agreeing with it.
        List<Cable> mesh;
        try {
            mesh = MeshCabling.fullMesh(names);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("a full mesh of " + names.size() + " Macs is not possible: " + e.getMessage(), e);
        }
        List<String> links = new ArrayList<>();
        for (Cable cable : mesh) {
            cabling.plug(cable);
            links.add(cable.a() + " <-> " + cable.b());
        }
        return links;
    }

    /**
     * Gives every cabled Thunderbolt port of every Mac a loopback address of its own, as the Thunderbolt network step
     * gives real Macs one point-to-point address per cable end: a process bound to it (a ggml-rpc-server) is reachable
     * only there, so a peer list naming these addresses really goes over the "Thunderbolt" addresses. Mac 127.A.B.C gets
     * 127.(100 + 8A + PORT).B.C on port PORT (/30: one per cable end). Returns them as "machine enN address".
     */
    public List<String> assignThunderboltLoopbackAddresses() {
        List<String> assigned = new ArrayList<>();
        for (SimulatedMac mac : machines.values()) {
            String[] octets = mac.address().split("\\.");
            int second = Integer.parseInt(octets[1]);
            if (second > 15) {
                throw new IllegalStateException("Thunderbolt loopback addresses need management addresses 127.0-15.x.y, got " + mac.address());
            }
            for (int port = 1; port <= MacSpec.THUNDERBOLT_PORTS; port++) {
                if (link(mac, port) == null) {
                    continue;
                }
                String address = "127." + (100 + 8 * second + port) + "." + octets[2] + "." + octets[3];
                mac.setIpv4(MacSpec.thunderboltInterface(port), address + "/30");
                assigned.add(mac.name() + " " + MacSpec.thunderboltInterface(port) + " " + address);
            }
        }
        return assigned;
    }

    /** Cables the Macs in a ring (port 2 to the next Mac's port 3), for fleets too large for a full mesh. */
    public List<String> cableRing() {
        List<String> names = new ArrayList<>(machines.keySet());
        List<String> links = new ArrayList<>();
        int cables = names.size() < 2 ? 0 : names.size() == 2 ? 1 : names.size();
        for (int i = 0; i < cables; i++) {
            Cable cable = new Cable(new PortRef(names.get(i), 2), new PortRef(names.get((i + 1) % names.size()), 3), LinkSpeed.TB5);
            cabling.plug(cable);
            links.add(cable.a() + " <-> " + cable.b());
        }
        return links;
    }

    public boolean sshReachable(String name) {
        return servers.get(machine(name).name()).running();
    }

    // ---- power, reboot and Recovery ----

    /** Restarts a Mac: SSH goes away for the fleet's reboot duration, then comes back (unless a fault keeps it down). */
    public void reboot(String name) {
        SimulatedMac mac = machine(name);
        shutDown(mac, PowerState.REBOOTING);
        sharedTimers.schedule(() -> {
            if (mac.power() == PowerState.REBOOTING && !mac.faults().rebootNeverReturns()) {
                powerOnNow(mac);
            }
        }, rebootDuration.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Powers the Mac off, restores it as delivered ({@link SimulatedMac#restoreAsDelivered}) and boots it again. */
    public void restoreAsDelivered(String name, MacosRelease delivered) {
        SimulatedMac mac = machine(name);
        shutDown(mac, PowerState.OFF);
        mac.restoreAsDelivered(delivered);
        powerOnNow(mac);
    }

    public void powerOff(String name) {
        shutDown(machine(name), PowerState.OFF);
    }

    /** Presses the power button: boots a Mac that is off, stuck in a reboot, or in Recovery. */
    public void powerOn(String name) {
        SimulatedMac mac = machine(name);
        if (mac.power() != PowerState.ON) {
            powerOnNow(mac);
        }
    }

    /** What an operator does by holding the power button at startup: the Mac is in Recovery, SSH unreachable. */
    public void enterRecovery(String name) {
        shutDown(machine(name), PowerState.RECOVERY);
    }

    /**
     * Types one command into Recovery's Terminal and returns what it prints. {@code reboot} leaves Recovery.
     *
     * @throws IllegalStateException if the Mac is not in Recovery
     */
    public RecoveryOutput recoveryConsole(String name, String commandLine) {
        SimulatedMac mac = machine(name);
        if (mac.power() != PowerState.RECOVERY) {
            throw new IllegalStateException(name + " is not in Recovery (power state " + mac.power().name().toLowerCase(Locale.ROOT)
                    + "); put it into Recovery first");
        }
        MacShell.Result result = new MacShell(this, mac).recovery(commandLine);
        if (result.afterExit() != null) {
            result.afterExit().run();
        }
        return new RecoveryOutput(result.stdout() + result.stderr(), result.exitCode());
    }

    /** What Recovery's Terminal printed for one command. */
    public record RecoveryOutput(String output, int exitCode) {
    }

    private void shutDown(SimulatedMac mac, PowerState state) {
        mac.setPower(state);
        servers.get(mac.name()).stop();
        mac.launchd().stopAll();
    }

    private void powerOnNow(SimulatedMac mac) {
        mac.boot();
        try {
            servers.get(mac.name()).start();
        } catch (IOException e) {
            mac.setPower(PowerState.OFF);
            throw new UncheckedIOException("SSH server of " + mac.name() + " could not start on "
                    + servers.get(mac.name()).host() + ": " + e.getMessage(), e);
        }
        mac.launchd().bootAll();
    }

    // ---- faults that are actions ----

    /** The machine gets a new SSH host key (as after a reinstall); clients that pinned the old one must notice. */
    public void changeHostKey(String name) {
        try {
            servers.get(machine(name).name()).changeHostKey();
        } catch (IOException e) {
            throw new UncheckedIOException("could not change the host key of " + name, e);
        }
    }

    /** Kills a running launch daemon as a crash would; KeepAlive restarts it after its throttle interval. */
    public boolean crashDaemon(String name, String label) {
        return machine(name).launchd().crash(label);
    }

    /** The names of the standard fault kinds ({@link FaultKinds#standard()}), each once. */
    public static final List<String> FAULT_KINDS = FaultKinds.standard().names();

    /** The fault kinds this fleet understands. */
    public FaultKinds faultKinds() {
        return faultKinds;
    }

    /**
     * Injects one fault: the kind registered under its name for its target ({@link FaultKinds}); a cable fault names
     * a port in {@code cable}, a machine fault the machine. An unknown kind is refused with the known ones.
     *
     * @return a sentence saying what was done
     */
    public String inject(FaultStep step) {
        String kind = step.kind();
        if (step.cable() != null) {
            PortRef port = PortRef.parse(step.cable());
            machine(port.machine());
            FaultKind cableFault = faultKinds.find(FaultKind.Target.CABLE, kind).orElseThrow(() -> new IllegalArgumentException(
                    "'" + kind + "' is not a cable fault (" + String.join(", ", faultKinds.names(FaultKind.Target.CABLE)) + ")"));
            return cableFault.apply(new FaultKind.Injection(this, step, null, port));
        }
        if (step.machine() == null) {
            throw new IllegalArgumentException("a fault step needs 'machine' or 'cable'");
        }
        SimulatedMac mac = machine(step.machine());
        FaultKind machineFault = faultKinds.find(FaultKind.Target.MACHINE, kind).orElseThrow(() -> new IllegalArgumentException(
                "unknown fault '" + kind + "' for " + mac.name() + "; known: " + faultKinds.names()));
        return machineFault.apply(new FaultKind.Injection(this, step, mac, null));
    }

    void silence(String name, boolean silent) {
        try {
            servers.get(name).silence(silent);
        } catch (IOException e) {
            throw new UncheckedIOException("could not " + (silent ? "silence" : "restore") + " the SSH server of " + name, e);
        }
    }

    // ---- what the machines see ----

    /** The newest release softwareupdate offers to a Mac running {@code current}. */
    Optional<MacosRelease> availableUpdate(MacosRelease current) {
        return MacosRelease.after(current).filter(next -> next.compareVersion(latestRelease) <= 0);
    }

    List<MacosOutput.ThunderboltPort> thunderboltPorts(SimulatedMac mac) {
        List<MacosOutput.ThunderboltPort> ports = new ArrayList<>();
        MacSpec spec = mac.spec();
        for (int port = 1; port <= MacSpec.THUNDERBOLT_PORTS; port++) {
            Link link = link(mac, port);
            MacosOutput.Peer peer = null;
            if (link != null) {
                MacSpec peerSpec = link.peer().spec();
                int peerPort = link.peerPort();
                peer = new MacosOutput.Peer(peerSpec.modelName(), peerSpec.modelIdentifier(), peerSpec.domainUuid(peerPort),
                        serviceUuid(peerSpec, peerPort, "ip"), link.peer().snapshot().rdmaEnabled(), serviceUuid(peerSpec, peerPort, "rdma"));
            }
            ports.add(new MacosOutput.ThunderboltPort(port, spec.domainUuid(port), spec.switchUid(port),
                    link == null ? null : link.speed(), peer));
        }
        return ports;
    }

    private record Link(SimulatedMac peer, int peerPort, LinkSpeed speed) {
    }

    /** The link this port sees: a cable whose far end is a Mac that is up (in macOS or Recovery). */
    private Link link(SimulatedMac mac, int port) {
        PortRef here = new PortRef(mac.name(), port);
        Optional<Cable> cable = cabling.at(here);
        if (cable.isEmpty()) {
            return null;
        }
        PortRef far = cable.get().peerSeenFrom(here);
        if (far == null || !machines.containsKey(far.machine())) {
            return null;
        }
        SimulatedMac peer = machines.get(far.machine());
        PowerState peerPower = peer.power();
        if (peerPower != PowerState.ON && peerPower != PowerState.RECOVERY) {
            return null;
        }
        return new Link(peer, far.port(), cable.get().speed());
    }

    private static String serviceUuid(MacSpec spec, int port, String service) {
        return UUID.nameUUIDFromBytes((spec.hardwareUuid() + "/service/" + port + "/" + service).getBytes(StandardCharsets.UTF_8))
                .toString().toUpperCase(Locale.ROOT);
    }

    /** rdma_enN devices: one per Thunderbolt interface; active when linked at Thunderbolt 5 to a Mac with RDMA on. */
    List<MacosOutput.RdmaDevice> rdmaDevices(SimulatedMac mac) {
        List<MacosOutput.RdmaDevice> devices = new ArrayList<>();
        long systemImage = MacosOutput.guidFor(mac.spec(), "system");
        for (int port = 1; port <= MacSpec.THUNDERBOLT_PORTS; port++) {
            String device = "rdma_" + MacSpec.thunderboltInterface(port);
            Link link = link(mac, port);
            boolean faulty = cabling.at(new PortRef(mac.name(), port)).map(cable -> cable.rdmaDown() || cable.oneSided()).orElse(false);
            boolean active = link != null && !faulty && link.speed() == LinkSpeed.TB5 && link.peer().snapshot().rdmaEnabled();
            devices.add(new MacosOutput.RdmaDevice(device, MacosOutput.guidFor(mac.spec(), device), systemImage, active, port));
        }
        return devices;
    }

    List<MacosOutput.Interface> interfaces(SimulatedMac mac) {
        SimulatedMac.Snapshot state = mac.snapshot();
        MacSpec spec = mac.spec();
        List<MacosOutput.Interface> interfaces = new ArrayList<>();
        interfaces.add(new MacosOutput.Interface("en0", spec.macAddress("en0"), state.ipv4().get("en0"), true, false, null));
        interfaces.add(new MacosOutput.Interface("en1", spec.macAddress("en1"), state.ipv4().get("en1"), false, false, null));
        List<String> members = new ArrayList<>();
        boolean anyLink = false;
        for (int port = 1; port <= MacSpec.THUNDERBOLT_PORTS; port++) {
            String name = MacSpec.thunderboltInterface(port);
            boolean linked = link(mac, port) != null;
            anyLink |= linked;
            // A linked port without a configured address self-assigns 169.254/16, unless it is a bridge member.
            String address = state.ipv4().get(name);
            if (address == null && linked && !state.thunderboltBridgeActive()) {
                address = linkLocal(spec, name);
            }
            interfaces.add(new MacosOutput.Interface(name, spec.macAddress(name), address, linked, true, null));
            if (state.thunderboltBridgeActive()) {
                members.add(name);
            }
        }
        String bridgeAddress = state.ipv4().get("bridge0");
        if (bridgeAddress == null && state.thunderboltBridgeActive() && anyLink) {
            bridgeAddress = linkLocal(spec, "bridge0");
        }
        interfaces.add(new MacosOutput.Interface("bridge0", spec.macAddress("bridge0"), bridgeAddress,
                state.thunderboltBridgeActive() && anyLink, false, members));
        return interfaces;
    }

    /** A self-assigned address as macOS picks one: 169.254.1.0 to 169.254.254.255, stable per interface. */
    private static String linkLocal(MacSpec spec, String interfaceName) {
        long bits = UUID.nameUUIDFromBytes((spec.hardwareUuid() + "/linklocal/" + interfaceName).getBytes(StandardCharsets.UTF_8))
                .getMostSignificantBits();
        return "169.254." + (1 + Math.floorMod(bits, 254)) + "." + Math.floorMod(bits >>> 16, 256) + "/16";
    }

    private static boolean loopbackAliasesWork(String baseAddress) {
        if (baseAddress.equals("127.0.0.1")) {
            return false;
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress(InetAddress.getByName(offset(baseAddress, 1)), 0));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static String offset(String baseAddress, int index) {
        String[] octets = baseAddress.split("\\.");
        int last = Integer.parseInt(octets[3]) + index;
        int third = Integer.parseInt(octets[2]) + last / 256;
        last %= 256;
        if (third > 255) {
            throw new IllegalArgumentException("too many simulated Macs for base address " + baseAddress);
        }
        return octets[0] + "." + octets[1] + "." + third + "." + last;
    }

    /** Builds a fleet; nothing listens until {@link SimulatedFleet#start()}. */
    public static final class Builder {
        private record Machine(MacSpec spec, MacosRelease release, boolean rdmaEnabled) {
        }

        private final Path stateDirectory;
        private final List<Machine> machines = new ArrayList<>();
        private final List<PublicKey> authorizedKeys = new ArrayList<>();
        private String sshUser = "admin";
        private String baseAddress = "127.0.0.11";
        private int basePort;
        private Duration rebootDuration = Duration.ofSeconds(5);
        private MacosRelease latestRelease = MacosRelease.of("26.2");
        private String volumeOwnerUser = "admin";
        private String volumeOwnerPassword = "macfleet-demo";
        private final List<SimulatedProgram> programs = new ArrayList<>(SimulatedPrograms.standard());
        private FaultKinds faultKinds = FaultKinds.standard();

        private Builder(Path stateDirectory) {
            this.stateDirectory = Objects.requireNonNull(stateDirectory, "stateDirectory");
        }

        public Builder machine(MacSpec spec, MacosRelease release, boolean rdmaEnabled) {
            machines.add(new Machine(spec, release, rdmaEnabled));
            return this;
        }

        public Builder macStudio(String name, int memoryGb, String macosVersion) {
            return machine(MacSpec.macStudioM3Ultra(name, memoryGb), MacosRelease.of(macosVersion), false);
        }

        public Builder sshUser(String user) {
            this.sshUser = user;
            return this;
        }

        public Builder authorizedKey(PublicKey key) {
            authorizedKeys.add(key);
            return this;
        }

        /** First loopback address (default 127.0.0.11); machine i gets base + i. */
        public Builder baseAddress(String address) {
            if (!address.startsWith("127.")) {
                throw new IllegalArgumentException("simulated Macs listen on loopback addresses only (127.0.0.0/8), got " + address);
            }
            this.baseAddress = address;
            return this;
        }

        /** SSH port of every machine (default 0: an ephemeral port each). */
        public Builder basePort(int port) {
            this.basePort = port;
            return this;
        }

        public Builder rebootDuration(Duration duration) {
            this.rebootDuration = duration;
            return this;
        }

        /** The newest macOS softwareupdate offers (default 26.2). */
        public Builder latestRelease(String version) {
            this.latestRelease = MacosRelease.of(version);
            return this;
        }

        public Builder volumeOwner(String user, String password) {
            this.volumeOwnerUser = user;
            this.volumeOwnerPassword = password;
            return this;
        }

        /** One more program every machine answers (tests); a name that a program already answers to is an error at {@link #build()}. */
        /** One more fault kind for this fleet (tests); a name its target already has is refused. */
        Builder fault(FaultKind kind) {
            faultKinds = faultKinds.with(kind);
            return this;
        }

        Builder program(SimulatedProgram program) {
            programs.add(program);
            return this;
        }

        public SimulatedFleet build() {
            return new SimulatedFleet(this);
        }
    }
}
