package io.macfleet.simulator;

import java.util.List;

/** The fault kinds of one machine, one class each; registered in {@link FaultKinds#standard()}. */
final class MachineFaultKinds {

    private MachineFaultKinds() {
    }

    /** A machine fault that sets something and answers "KIND on MACHINE". */
    abstract static class Simple implements FaultKind {
        @Override
        public Target target() {
            return Target.MACHINE;
        }

        @Override
        public String apply(Injection injection) {
            act(injection);
            return name() + " on " + injection.mac().name();
        }

        abstract void act(Injection injection);
    }

    static String requireDaemon(FaultStep step) {
        if (step.daemon() == null || step.daemon().isBlank()) {
            throw new IllegalArgumentException("fault '" + step.fault() + "' needs 'daemon' (a launch daemon label)");
        }
        return step.daemon();
    }

    /** SSH accepts commands and never answers. */
    static final class Hang extends Simple {
        public String name() {
            return "hang";
        }

        void act(Injection injection) {
            injection.faults().setHang(true);
        }
    }

    /** The SSH server accepts connections and never answers them. */
    static final class HangConnect extends Simple {
        public String name() {
            return "hang-connect";
        }

        void act(Injection injection) {
            injection.fleet().silence(injection.mac().name(), true);
        }
    }

    /** Every command answers {@code millis} late (default 2000). */
    static final class Slow extends Simple {
        public String name() {
            return "slow";
        }

        @Override
        public List<String> parameters() {
            return List.of("millis");
        }

        void act(Injection injection) {
            injection.faults().setSlowMillis(injection.step().millis() == null ? 2000 : injection.step().millis());
        }
    }

    static final class DropConnection extends Simple {
        public String name() {
            return "drop-connection";
        }

        void act(Injection injection) {
            injection.faults().setDropMidCommand(true);
        }
    }

    static final class Garbage extends Simple {
        public String name() {
            return "garbage";
        }

        void act(Injection injection) {
            injection.faults().setGarbage(true);
        }
    }

    static final class RebootNeverReturns extends Simple {
        public String name() {
            return "reboot-never-returns";
        }

        void act(Injection injection) {
            injection.faults().setRebootNeverReturns(true);
        }
    }

    static final class DiskFull extends Simple {
        public String name() {
            return "disk-full";
        }

        void act(Injection injection) {
            injection.faults().setDiskFull(true);
        }
    }

    /** The daemon exits as soon as it starts, over and over (KeepAlive restarts it). */
    static final class CrashLoop extends Simple {
        public String name() {
            return "crash-loop";
        }

        @Override
        public List<String> parameters() {
            return List.of("daemon");
        }

        void act(Injection injection) {
            injection.faults().crashLoop(requireDaemon(injection.step()));
            injection.mac().launchd().crash(injection.step().daemon());
        }
    }

    /** kill -9 of a running daemon, once. */
    static final class DaemonCrash implements FaultKind {
        public String name() {
            return "daemon-crash";
        }

        public Target target() {
            return Target.MACHINE;
        }

        @Override
        public List<String> parameters() {
            return List.of("daemon");
        }

        public String apply(Injection injection) {
            String name = injection.mac().name();
            if (!injection.fleet().crashDaemon(name, requireDaemon(injection.step()))) {
                return injection.step().daemon() + " is not running on " + name;
            }
            return name() + " on " + name;
        }
    }

    /** Every daemon logs the RDMA queue-pair error and exits, ibv_devinfo hangs, until a reboot. */
    static final class WedgeRdma extends Simple {
        public String name() {
            return "wedge-rdma";
        }

        void act(Injection injection) {
            injection.faults().setRdmaWedged(true);
            for (String label : injection.mac().launchd().labels()) {
                injection.mac().launchd().crash(label);
            }
        }
    }

    static final class HostKeyChange extends Simple {
        public String name() {
            return "host-key-change";
        }

        void act(Injection injection) {
            injection.fleet().changeHostKey(injection.mac().name());
        }
    }

    /** Heavy thermal pressure and high package power in powermetrics. */
    static final class Overheat extends Simple {
        public String name() {
            return "overheat";
        }

        void act(Injection injection) {
            injection.faults().setOverheating(true);
        }
    }

    /** A panic report appears in /Library/Logs/DiagnosticReports. */
    static final class KernelPanic implements FaultKind {
        public String name() {
            return "kernel-panic";
        }

        public Target target() {
            return Target.MACHINE;
        }

        public String apply(Injection injection) {
            return "kernel-panic on " + injection.mac().name() + ": wrote " + HealthPrograms.writePanicReport(injection.mac());
        }
    }

    /** memory_pressure reports most memory wired. */
    static final class WiredMemoryHigh extends Simple {
        public String name() {
            return "wired-memory-high";
        }

        void act(Injection injection) {
            injection.faults().setWiredFraction(0.74);
        }
    }

    static final class Reboot extends Simple {
        public String name() {
            return "reboot";
        }

        void act(Injection injection) {
            injection.fleet().reboot(injection.mac().name());
        }
    }

    static final class PowerOff extends Simple {
        public String name() {
            return "power-off";
        }

        void act(Injection injection) {
            injection.fleet().powerOff(injection.mac().name());
        }
    }

    static final class PowerOn extends Simple {
        public String name() {
            return "power-on";
        }

        void act(Injection injection) {
            injection.fleet().powerOn(injection.mac().name());
        }
    }

    static final class Recovery extends Simple {
        public String name() {
            return "recovery";
        }

        void act(Injection injection) {
            injection.fleet().enterRecovery(injection.mac().name());
        }
    }

    /** Every fault of the machine off; its SSH server answers again when it is on. */
    static final class Clear extends Simple {
        public String name() {
            return "clear";
        }

        void act(Injection injection) {
            injection.faults().clear();
            if (injection.mac().power() == PowerState.ON) {
                injection.fleet().silence(injection.mac().name(), false);
            }
        }
    }
}
