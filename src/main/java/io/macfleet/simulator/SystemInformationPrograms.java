package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** sw_vers, system_profiler, sysctl, uname, hostname, whoami, id, uptime, df and csrutil: what macfleet reads to know a machine (formats from real Macs, see MacosFormatsTest). */
final class SystemInformationPrograms implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("sw_vers", "system_profiler", "sysctl", "uname", "hostname", "whoami", "id", "uptime", "df", "csrutil");
    }

    @Override
    public Result run(Call call) {
        SimulatedFleet fleet = call.fleet();
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        boolean root = call.root();
        SimulatedMac.Snapshot state = call.state();
        return switch (call.program()) {
            case "sw_vers" -> swVers(args, state);
            case "system_profiler" -> systemProfiler(fleet, mac, args, state);
            case "sysctl" -> sysctl(mac, args, state);
            case "uname" -> uname(mac, args, state);
            case "hostname" -> Result.ok(mac.name() + "\n");
            case "whoami" -> Result.ok((root ? "root" : fleet.sshUser()) + "\n");
            case "id" -> Result.ok(args.contains("-u") ? (root ? "0\n" : "501\n") : (root ? "uid=0(root) gid=0(wheel)\n" : "uid=501(" + fleet.sshUser() + ") gid=20(staff)\n"));
            case "uptime" -> Result.ok(MacosOutput.uptime(Duration.between(state.bootTime(), Instant.now())));
            case "df" -> args.contains("-k") ? dfKilobytes(mac) : df(mac);
            case "csrutil" -> args.contains("status") ? Result.ok("System Integrity Protection status: enabled.\n")
                    : Result.fail(1, "csrutil: failed to modify system integrity configuration. This tool needs to be executed from the Recovery OS.\n");
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    private static Result swVers(List<String> args, SimulatedMac.Snapshot state) {
        if (args.isEmpty()) {
            return Result.ok(MacosOutput.swVers(state.release()));
        }
        return switch (args.getFirst()) {
            case "-productName", "--productName" -> Result.ok("macOS\n");
            case "-productVersion", "--productVersion" -> Result.ok(state.release().version() + "\n");
            case "-buildVersion", "--buildVersion" -> Result.ok(state.release().build() + "\n");
            default -> Result.fail(1, "usage: sw_vers [-productName|-productVersion|-productVersionExtra|-buildVersion]\n");
        };
    }

    private static Result systemProfiler(SimulatedFleet fleet, SimulatedMac mac, List<String> args, SimulatedMac.Snapshot state) {
        boolean json = args.contains("-json");
        List<String> types = args.stream().filter(a -> a.startsWith("SP")).toList();
        if (types.size() != 1) {
            return Result.fail(1, "system_profiler: the simulator answers exactly one data type (SPHardwareDataType, SPDisplaysDataType or SPThunderboltDataType)\n");
        }
        return switch (types.getFirst()) {
            case "SPHardwareDataType" -> json ? Result.ok(MacosOutput.hardwareJson(state.spec(), state.release()))
                    : Result.ok(hardwareText(state));
            case "SPDisplaysDataType" -> json ? Result.ok(MacosOutput.displaysJson(state.spec()))
                    : Result.ok("Graphics/Displays:\n\n    " + state.spec().chip() + ":\n\n      Chipset Model: " + state.spec().chip()
                            + "\n      Type: GPU\n      Bus: Built-In\n      Total Number of Cores: " + state.spec().gpuCores()
                            + "\n      Vendor: Apple (0x106b)\n      Metal Support: Metal 4\n\n");
            case "SPThunderboltDataType" -> Result.ok(json ? MacosOutput.thunderboltJson(state.spec(), fleet.thunderboltPorts(mac))
                    : MacosOutput.thunderboltText(state.spec(), fleet.thunderboltPorts(mac)));
            default -> json ? Result.ok("{\n  \"" + types.getFirst() + "\" : [\n\n  ]\n}\n") : Result.ok("");
        };
    }

    private static String hardwareText(SimulatedMac.Snapshot state) {
        MacSpec spec = state.spec();
        return "Hardware:\n\n    Hardware Overview:\n\n"
                + "      Model Name: " + spec.modelName() + "\n"
                + "      Model Identifier: " + spec.modelIdentifier() + "\n"
                + "      Chip: " + spec.chip() + "\n"
                + "      Total Number of Cores: " + spec.cpuCores() + " (" + spec.performanceCores() + " Performance and " + spec.efficiencyCores() + " Efficiency)\n"
                + "      Memory: " + spec.memoryGb() + " GB\n"
                + "      Serial Number (system): " + spec.serialNumber() + "\n"
                + "      Hardware UUID: " + spec.hardwareUuid() + "\n"
                + "      Activation Lock Status: Disabled\n\n";
    }

    private static Result sysctl(SimulatedMac mac, List<String> args, SimulatedMac.Snapshot state) {
        boolean valueOnly = args.contains("-n");
        StringBuilder out = new StringBuilder();
        for (String name : args) {
            if (name.startsWith("-")) {
                continue;
            }
            String value = switch (name) {
                case "hw.memsize" -> String.valueOf(state.spec().memoryBytes());
                case "hw.ncpu", "hw.logicalcpu", "hw.physicalcpu" -> String.valueOf(state.spec().cpuCores());
                case "hw.model" -> state.spec().modelIdentifier();
                case "machdep.cpu.brand_string" -> state.spec().chip();
                case "kern.osversion" -> state.release().build();
                case "kern.osproductversion" -> state.release().version();
                case "kern.hostname" -> mac.name();
                case "hw.pagesize" -> "16384";
                case "iogpu.wired_limit_mb" -> String.valueOf(mac.faults().wiredLimitMegabytes());
                case "kern.boottime" -> MacosOutput.bootTime(state.bootTime());
                default -> null;
            };
            if (value == null) {
                return new Result(out.toString(), "sysctl: unknown oid '" + name + "'\n", 1, null);
            }
            out.append(valueOnly ? "" : name + ": ").append(value).append('\n');
        }
        return Result.ok(out.toString());
    }

    private static Result uname(SimulatedMac mac, List<String> args, SimulatedMac.Snapshot state) {
        MacosRelease release = state.release();
        if (args.isEmpty() || args.contains("-s")) {
            return Result.ok("Darwin\n");
        }
        return switch (args.getFirst()) {
            case "-a" -> Result.ok(MacosOutput.unameAll(mac.name(), release));
            case "-r" -> Result.ok(release.darwinVersion() + "\n");
            case "-m", "-p" -> Result.ok(args.getFirst().equals("-m") ? "arm64\n" : "arm\n");
            case "-n" -> Result.ok(mac.name() + "\n");
            case "-v" -> Result.ok("Darwin Kernel Version " + release.darwinVersion() + ": " + release.kernelBuildDate() + "; root:" + release.xnu() + "/RELEASE_ARM64_T6031\n");
            default -> Result.fail(1, "usage: uname [-amnprsv]\n");
        };
    }

    /**
     * df -k PATH: macOS's layout with 1024-byte blocks and the inode columns (see SOURCES.md); the boot volume of a
     * Mac Studio with 2 TB; the disk-full fault leaves 0 available.
     */
    private static Result dfKilobytes(SimulatedMac mac) {
        // The figures of the composed sample macos-samples/df/df-k-root.txt (a 2 TB boot volume).
        long size = 1_942_700_360L;
        long available = mac.faults().diskFull() ? 0 : mac.faults().diskAvailableKilobytes() >= 0 ? mac.faults().diskAvailableKilobytes() : 1_739_870_612L;
        long used = size - available;
        return Result.ok("Filesystem     1024-blocks     Used  Available Capacity iused      ifree %iused  Mounted on\n"
                + String.format("/dev/disk3s1s1  %10d %8d %10d    %3d%%  453019 4294967279    0%%   /%n", size, used, available,
                Math.round(100.0 * used / size)));
    }

    /** df -h /: layout from memory of macOS (marked invented in SOURCES.md); a disk-full fault shows 100%. */
    private static Result df(SimulatedMac mac) {
        boolean full = mac.faults().diskFull();
        return Result.ok("Filesystem        Size    Used   Avail Capacity iused ifree %iused  Mounted on\n"
                + "/dev/disk3s1s1   1.8Ti    " + (full ? "1.8Ti     0Bi   100%" : " 12Gi   1.6Ti     1%")
                + "    453k  4.3G    0%   /\n");
    }
}
