package io.macfleet.simulator;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;

/**
 * The fault kinds a fleet understands: {@link #standard()} is the one place that lists them (the simulator also runs
 * outside CDI, in the demo and in tests, so this is a plain list, as {@link SimulatedPrograms#standard()} is). Two
 * kinds with the same name and target are refused.
 */
public final class FaultKinds {

    private final List<FaultKind> kinds;

    private FaultKinds(List<FaultKind> kinds) {
        this.kinds = List.copyOf(kinds);
    }

    /** Every fault kind of the simulator, in the order its help and its "known:" messages list them. */
    public static FaultKinds standard() {
        return of(List.of(
                new MachineFaultKinds.Hang(), new MachineFaultKinds.HangConnect(), new MachineFaultKinds.Slow(),
                new MachineFaultKinds.DropConnection(), new MachineFaultKinds.Garbage(), new MachineFaultKinds.RebootNeverReturns(),
                new MachineFaultKinds.DiskFull(), new MachineFaultKinds.CrashLoop(), new MachineFaultKinds.DaemonCrash(),
                new MachineFaultKinds.WedgeRdma(), new MachineFaultKinds.HostKeyChange(), new MachineFaultKinds.Reboot(),
                new MachineFaultKinds.PowerOff(), new MachineFaultKinds.PowerOn(), new MachineFaultKinds.Recovery(),
                new MachineFaultKinds.Clear(),
                new CableFaultKinds.Unplug(), new CableFaultKinds.Plug(), new CableFaultKinds.Speed("tb4", LinkSpeed.TB4),
                new CableFaultKinds.Speed("tb5", LinkSpeed.TB5), new CableFaultKinds.OneSided(), new CableFaultKinds.RdmaDown(),
                new CableFaultKinds.Move(), new CableFaultKinds.Clear(),
                new MachineFaultKinds.Overheat(), new MachineFaultKinds.KernelPanic(), new MachineFaultKinds.WiredMemoryHigh()));
    }

    /** These kinds; refuses two with the same name for the same target. */
    public static FaultKinds of(List<FaultKind> kinds) {
        List<String> seen = new ArrayList<>();
        for (FaultKind kind : kinds) {
            String key = kind.target() + " " + kind.name();
            if (seen.contains(key)) {
                throw new IllegalArgumentException("two " + kind.target().name().toLowerCase(java.util.Locale.ROOT) + " fault kinds are named '"
                        + kind.name() + "'");
            }
            seen.add(key);
        }
        return new FaultKinds(kinds);
    }

    /** These kinds and one more. */
    public FaultKinds with(FaultKind extra) {
        List<FaultKind> more = new ArrayList<>(kinds);
        more.add(extra);
        return of(more);
    }

    public List<FaultKind> all() {
        return kinds;
    }

    /** Every name, once (clear is a machine and a cable fault), in registration order. */
    public List<String> names() {
        return List.copyOf(new LinkedHashSet<>(kinds.stream().map(FaultKind::name).toList()));
    }

    public List<String> names(FaultKind.Target target) {
        return kinds.stream().filter(kind -> kind.target() == target).map(FaultKind::name).toList();
    }

    public Optional<FaultKind> find(FaultKind.Target target, String name) {
        return kinds.stream().filter(kind -> kind.target() == target && kind.name().equals(name)).findFirst();
    }
}
