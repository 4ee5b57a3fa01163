package io.macfleet.simulator;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Faults injected into one simulated Mac. Cable faults live in {@link Cabling}; host-key changes and daemon
 * crashes are actions on {@link SimulatedFleet}.
 */
public final class Faults {
    /** SSH accepts the command and never answers. */
    public volatile boolean hang;
    /** Every command answers this many milliseconds late. */
    public volatile long slowMillis;
    /** The connection drops in the middle of the next commands' output. */
    public volatile boolean dropMidCommand;
    /** Commands answer with garbage instead of their output. */
    public volatile boolean garbage;
    /** Programs (argv[0] without directory) that answer with garbage while the others answer normally. */
    public final Set<String> garbledPrograms = ConcurrentHashMap.newKeySet();

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
    public volatile boolean rebootNeverReturns;
    /** SFTP uploads fail with "no space left on device" and df shows a full disk. */
    public volatile boolean diskFull;
    /**
     * RDMA over Thunderbolt is wedged (exo #1847, #1712): every launch daemon logs the JACCL queue-pair error and exits
     * as soon as it starts, and {@code ibv_devinfo} hangs; only a reboot of the machine clears it.
     */
    public volatile boolean rdmaWedged;
    /** What df -k says is available on the boot volume, in KiB; negative: the default (most of the disk). */
    public volatile long diskAvailableKilobytes = -1;
    /**
     * Programs copied onto the Mac (by file name, e.g. "llama-server") that run as another program of this host: a Mac
     * where something other than the copied, checked file answers (another build of the program, or its libraries, found
     * first). Both a run by path over SSH and a launch daemon run the stand-in; the copied file itself is untouched.
     */
    public final java.util.Map<String, java.nio.file.Path> programsReplaced = new ConcurrentHashMap<>();
    /**
     * Launch daemons started while this is set (not negative) cannot write a file beyond this many bytes: the simulated
     * launchd starts them under {@code ulimit -f} (RLIMIT_FSIZE), so their writes fail part-way as on a disk that fills
     * during a copy, while {@code df -k} still shows what {@link #diskAvailableKilobytes} says.
     */
    public volatile long daemonFileSizeLimitBytes = -1;
    /** Launch daemons (by label) whose program exits with an error as soon as it starts. */
    public final Set<String> crashLoopingDaemons = ConcurrentHashMap.newKeySet();
    /** Network services (such as "Thunderbolt 2") deleted from the Mac's network settings: the hardware port stays. */
    public final Set<String> deletedNetworkServices = ConcurrentHashMap.newKeySet();
    /** The Mac runs hot: powermetrics reports heavy thermal pressure and a package power far above normal. */
    public volatile boolean overheating;
    /** What {@code sysctl iogpu.wired_limit_mb} says (0: macOS' default limit). */
    public volatile long wiredLimitMegabytes;
    /** Memory wired down, as a fraction of physical memory, that memory_pressure reports; negative: the default. */
    public volatile double wiredFraction = -1;

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
