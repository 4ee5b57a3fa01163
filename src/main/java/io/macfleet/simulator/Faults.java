package io.macfleet.simulator;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The faults one simulated Mac has now: each Mac has its own (never shared, never static), changed by the fault kinds
 * ({@link FaultKind}, registered in {@link FaultKinds}) and by tests through these methods, and read by the simulated
 * programs and the SSH server. Cable faults live in {@link Cabling}; host-key changes and daemon crashes are actions on
 * {@link SimulatedFleet}. Every value is safe to read and change from any thread.
 */
public final class Faults {
    private volatile boolean hang;
    private volatile long slowMillis;
    private volatile boolean dropMidCommand;
    private volatile boolean garbage;
    private final Set<String> garbledPrograms = ConcurrentHashMap.newKeySet();
    private volatile boolean rebootNeverReturns;
    private volatile boolean diskFull;
    private volatile boolean rdmaWedged;
    private volatile long diskAvailableKilobytes = -1;
    private final Map<String, Path> programsReplaced = new ConcurrentHashMap<>();
    private volatile long daemonFileSizeLimitBytes = -1;
    private final Set<String> crashLoopingDaemons = ConcurrentHashMap.newKeySet();
    private final Set<String> deletedNetworkServices = ConcurrentHashMap.newKeySet();
    private volatile boolean overheating;
    private volatile long wiredLimitMegabytes;
    private volatile double wiredFraction = -1;

    /** SSH accepts the command and never answers. */
    public boolean hang() {
        return hang;
    }

    public void setHang(boolean hang) {
        this.hang = hang;
    }

    /** Every command answers this many milliseconds late. */
    public long slowMillis() {
        return slowMillis;
    }

    public void setSlowMillis(long slowMillis) {
        this.slowMillis = slowMillis;
    }

    /** The connection drops in the middle of the next commands' output. */
    public boolean dropMidCommand() {
        return dropMidCommand;
    }

    public void setDropMidCommand(boolean dropMidCommand) {
        this.dropMidCommand = dropMidCommand;
    }

    /** Commands answer with garbage instead of their output. */
    public boolean garbage() {
        return garbage;
    }

    public void setGarbage(boolean garbage) {
        this.garbage = garbage;
    }

    /** The program (argv[0] without directory) answers with garbage while the others answer normally. */
    public void garbleProgram(String program) {
        garbledPrograms.add(program);
    }

    /** Whether this command line's output is garbage: every command's, or its program's. */
    boolean garbles(String commandLine) {
        if (garbage) {
            return true;
        }
        String[] words = commandLine.strip().split("\\s+");
        String program = words.length == 0 ? "" : words[0].substring(words[0].lastIndexOf('/') + 1);
        return garbledPrograms.contains(program);
    }

    /** The next reboot never comes back (SSH stays down until the fault is cleared and the Mac powered on). */
    public boolean rebootNeverReturns() {
        return rebootNeverReturns;
    }

    public void setRebootNeverReturns(boolean rebootNeverReturns) {
        this.rebootNeverReturns = rebootNeverReturns;
    }

    /** SFTP uploads fail with "no space left on device" and df shows a full disk. */
    public boolean diskFull() {
        return diskFull;
    }

    public void setDiskFull(boolean diskFull) {
        this.diskFull = diskFull;
    }

    /**
     * RDMA over Thunderbolt is wedged (exo #1847, #1712): every launch daemon logs the JACCL queue-pair error and exits
     * as soon as it starts, and {@code ibv_devinfo} hangs; only a reboot of the machine clears it.
     */
    public boolean rdmaWedged() {
        return rdmaWedged;
    }

    public void setRdmaWedged(boolean rdmaWedged) {
        this.rdmaWedged = rdmaWedged;
    }

    /** What df -k says is available on the boot volume, in KiB; negative: the default (most of the disk). */
    public long diskAvailableKilobytes() {
        return diskAvailableKilobytes;
    }

    public void setDiskAvailableKilobytes(long diskAvailableKilobytes) {
        this.diskAvailableKilobytes = diskAvailableKilobytes;
    }

    /**
     * A program copied onto the Mac (by file name, e.g. "llama-server") runs as {@code standIn}, another program of this
     * host: a Mac where something other than the copied, checked file answers (another build of the program, or its
     * libraries, found first). Both a run by path over SSH and a launch daemon run the stand-in; the copied file itself
     * is untouched.
     */
    public void replaceProgram(String fileName, Path standIn) {
        programsReplaced.put(fileName, standIn);
    }

    /** What runs when the copied program {@code file} is started: its stand-in, or the file itself. */
    public Path programRunFor(Path file) {
        return programsReplaced.getOrDefault(file.getFileName().toString(), file);
    }

    /** Every copied program runs as itself again. */
    public void restorePrograms() {
        programsReplaced.clear();
    }

    /**
     * Launch daemons started while this is set (not negative) cannot write a file beyond this many bytes: the simulated
     * launchd starts them under {@code ulimit -f} (RLIMIT_FSIZE), so their writes fail part-way as on a disk that fills
     * during a copy, while {@code df -k} still shows what {@link #diskAvailableKilobytes()} says.
     */
    public long daemonFileSizeLimitBytes() {
        return daemonFileSizeLimitBytes;
    }

    public void setDaemonFileSizeLimitBytes(long daemonFileSizeLimitBytes) {
        this.daemonFileSizeLimitBytes = daemonFileSizeLimitBytes;
    }

    /** The launch daemon (by label) exits with an error as soon as it starts, until {@link #stopCrashLoops()}. */
    public void crashLoop(String label) {
        crashLoopingDaemons.add(label);
    }

    public boolean crashLoops(String label) {
        return crashLoopingDaemons.contains(label);
    }

    public void stopCrashLoops() {
        crashLoopingDaemons.clear();
    }

    /** The network service (such as "Thunderbolt 2") is deleted from the Mac's network settings: the hardware port stays. */
    public void deleteNetworkService(String service) {
        deletedNetworkServices.add(service);
    }

    public boolean networkServiceDeleted(String service) {
        return deletedNetworkServices.contains(service);
    }

    public void restoreNetworkServices() {
        deletedNetworkServices.clear();
    }

    /** The Mac runs hot: powermetrics reports heavy thermal pressure and a package power far above normal. */
    public boolean overheating() {
        return overheating;
    }

    public void setOverheating(boolean overheating) {
        this.overheating = overheating;
    }

    /** What {@code sysctl iogpu.wired_limit_mb} says (0: macOS' default limit). */
    public long wiredLimitMegabytes() {
        return wiredLimitMegabytes;
    }

    public void setWiredLimitMegabytes(long wiredLimitMegabytes) {
        this.wiredLimitMegabytes = wiredLimitMegabytes;
    }

    /** Memory wired down, as a fraction of physical memory, that memory_pressure reports; negative: the default. */
    public double wiredFraction() {
        return wiredFraction;
    }

    public void setWiredFraction(double wiredFraction) {
        this.wiredFraction = wiredFraction;
    }

    /** Every fault of this Mac off (fault kind {@code clear}, a reset). */
    public void clear() {
        hang = false;
        slowMillis = 0;
        dropMidCommand = false;
        garbage = false;
        garbledPrograms.clear();
        rebootNeverReturns = false;
        diskFull = false;
        rdmaWedged = false;
        diskAvailableKilobytes = -1;
        daemonFileSizeLimitBytes = -1;
        crashLoopingDaemons.clear();
        deletedNetworkServices.clear();
        overheating = false;
        wiredLimitMegabytes = 0;
        wiredFraction = -1;
        programsReplaced.clear();
    }

    /**
     * The faults as the simulator's control API shows them (its JSON field order is part of the answer). The disk's
     * available space and deleted network services are not shown; cable faults live in {@link Cabling}.
     */
    public record FaultsSummary(boolean hang, long slowMillis, boolean dropMidCommand, boolean garbage, List<String> garbledPrograms,
                          boolean rebootNeverReturns, boolean diskFull, boolean rdmaWedged, List<String> crashLoopingDaemons) {
    }

    public FaultsSummary describe() {
        return new FaultsSummary(hang, slowMillis, dropMidCommand, garbage, List.copyOf(garbledPrograms), rebootNeverReturns, diskFull, rdmaWedged,
                List.copyOf(crashLoopingDaemons));
    }

}
