package io.macfleet.simulator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Answers the commands a simulated Mac receives over SSH, in macOS's formats. It is zsh as far as macfleet can
 * tell: simple commands joined by {@code ;}, {@code &&} and {@code ||}; no pipes, expansion or redirection
 * other than discarding to /dev/null.
 */
final class MacShell {
    /** Outcome of a command line. {@code afterExit} runs once the exit status has been sent (e.g. a reboot). */
    record Result(String stdout, String stderr, int exitCode, Runnable afterExit) {
        static Result ok(String stdout) {
            return new Result(stdout, "", 0, null);
        }

        static Result fail(int code, String stderr) {
            return new Result("", stderr, code, null);
        }
    }

    private final SimulatedFleet fleet;
    private final SimulatedMac mac;

    MacShell(SimulatedFleet fleet, SimulatedMac mac) {
        this.fleet = fleet;
        this.mac = mac;
    }

    Result run(String commandLine, Supplier<String> stdinLine) {
        List<ShellWords.Command> commands;
        try {
            commands = ShellWords.parse(commandLine);
        } catch (IllegalArgumentException e) {
            return Result.fail(1, e.getMessage() + "\n");
        }
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        int exit = 0;
        Runnable after = null;
        String previousOperator = "";
        String pipeInput = null;
        for (ShellWords.Command command : commands) {
            boolean piped = previousOperator.equals("|");
            boolean skip = !piped && ((previousOperator.equals("&&") && exit != 0) || (previousOperator.equals("||") && exit == 0));
            previousOperator = command.operatorAfter();
            if (skip || command.words().isEmpty()) {
                pipeInput = "";
                continue;
            }
            Result result = runSimple(new ArrayList<>(command.words()), stdinLine, piped ? pipeInput : null);
            if (command.operatorAfter().equals("|")) {
                pipeInput = result.stdout();
            } else {
                out.append(result.stdout());
            }
            err.append(result.stderr());
            exit = result.exitCode();
            if (result.afterExit() != null) {
                after = result.afterExit();
            }
        }
        return new Result(out.toString(), err.toString(), exit, after);
    }

    private Result runSimple(List<String> words, Supplier<String> stdinLine, String pipeInput) {
        boolean discardOut = words.remove(">/dev/null") | words.remove("1>/dev/null");
        boolean discardErr = words.remove("2>/dev/null");
        boolean mergeErr = words.remove("2>&1");
        if (words.isEmpty()) {
            return Result.ok("");
        }
        boolean root = false;
        if (words.getFirst().equals("sudo")) {
            words.removeFirst();
            if (words.isEmpty() || !words.getFirst().equals("-n")) {
                return Result.fail(1, "sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\nsudo: a password is required\n");
            }
            words.removeFirst();
            if (!words.isEmpty() && words.getFirst().equals("--")) {
                // sudo's end of options: what macfleet's Command sends (`sudo -n -- PROGRAM ...`).
                words.removeFirst();
            }
            root = true;
            if (words.isEmpty()) {
                return Result.fail(1, "usage: sudo -h | -K | -k | -V\n");
            }
        }
        Result result;
        try {
            result = dispatch(words, root, stdinLine, pipeInput);
        } catch (RuntimeException e) {
            result = Result.fail(1, words.getFirst() + ": " + e.getMessage() + "\n");
        }
        String stdout = discardOut ? "" : result.stdout();
        String stderr = discardErr ? "" : result.stderr();
        if (mergeErr) {
            stdout = stdout + stderr;
            stderr = "";
        }
        return new Result(stdout, stderr, result.exitCode(), result.afterExit());
    }

    private Result dispatch(List<String> words, boolean root, Supplier<String> stdinLine, String pipeInput) {
        String program = words.getFirst();
        if (program.contains("/")) {
            program = program.substring(program.lastIndexOf('/') + 1);
        }
        List<String> args = words.subList(1, words.size());
        SimulatedMac.Snapshot state = mac.snapshot();
        return switch (program) {
            case "sw_vers" -> swVers(args, state);
            case "system_profiler" -> systemProfiler(args, state);
            case "networksetup" -> networksetup(args, root);
            case "pmset" -> pmset(args, root, state);
            case "sshd" -> sshd(args, root);
            case "install" -> install(args, root);
            case "ifconfig" -> ifconfig(args, root, state);
            case "rdma_ctl" -> rdmaCtl(args, state);
            case "ibv_devices" -> state.rdmaEnabled() ? Result.ok(MacosOutput.ibvDevices(fleet.rdmaDevices(mac)))
                    : Result.ok(MacosOutput.ibvDevices(List.of()));
            case "ibv_devinfo" -> ibvDevinfo(args, state);
            case "profiles" -> profiles(args, root, state);
            case "sysctl" -> sysctl(args, state);
            case "uname" -> uname(args, state);
            case "hostname" -> Result.ok(mac.name() + "\n");
            case "whoami" -> Result.ok((root ? "root" : fleet.sshUser()) + "\n");
            case "id" -> Result.ok(args.contains("-u") ? (root ? "0\n" : "501\n") : (root ? "uid=0(root) gid=0(wheel)\n" : "uid=501(" + fleet.sshUser() + ") gid=20(staff)\n"));
            case "uptime" -> Result.ok(MacosOutput.uptime(Duration.between(state.bootTime(), Instant.now())));
            case "df" -> df();
            case "echo" -> Result.ok(String.join(" ", args) + "\n");
            case "true" -> Result.ok("");
            case "false" -> Result.fail(1, "");
            case "cat" -> cat(args);
            case "ls" -> ls(args);
            case "mkdir" -> mkdir(args);
            case "rm" -> rm(args);
            case "test", "[" -> test(args);
            case "chmod", "chown" -> Result.ok("");
            case "grep", "head", "tail", "wc", "awk", "sort" -> TextFilters.run(program, args, pipeInput == null ? "" : pipeInput);
            case "launchctl" -> launchctl(args, root);
            case "shutdown" -> shutdown(args, root);
            case "reboot" -> root ? rebootNow("") : Result.fail(1, "reboot: Operation not permitted\n");
            // OS updates over SSH live in UpdatePrograms (issue 15).
            case "softwareupdate" -> UpdatePrograms.softwareupdate(fleet, mac, args, root, stdinLine);
            case "startosinstall" -> UpdatePrograms.startosinstall(fleet, mac, args, root, stdinLine);
            case "diskutil" -> UpdatePrograms.diskutil(mac, args);
            case "dscl" -> UpdatePrograms.dscl(fleet, mac, args);
            case "csrutil" -> args.contains("status") ? Result.ok("System Integrity Protection status: enabled.\n")
                    : Result.fail(1, "csrutil: failed to modify system integrity configuration. This tool needs to be executed from the Recovery OS.\n");
            default -> Result.fail(127, "zsh: command not found: " + words.getFirst() + "\n");
        };
    }

    private Result swVers(List<String> args, SimulatedMac.Snapshot state) {
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

    private Result systemProfiler(List<String> args, SimulatedMac.Snapshot state) {
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

    private Result networksetup(List<String> args, boolean root) {
        if (args.contains("-listallhardwareports")) {
            return Result.ok(MacosOutput.listAllHardwarePorts(MacosOutput.macStudioHardwarePorts(mac.spec())));
        }
        if (args.size() == 2 && args.getFirst().equals("-getnetworkserviceenabled")) {
            if (!args.get(1).equals("Thunderbolt Bridge")) {
                return Result.fail(4, args.get(1) + " is not a recognized network service.\n** Error: The parameters were not valid.\n");
            }
            return Result.ok(mac.snapshot().thunderboltBridgeActive() ? "Enabled\n" : "Disabled\n");
        }
        if (args.size() == 3 && args.getFirst().equals("-setnetworkserviceenabled")) {
            if (!root) {
                return Result.fail(14, "** Error: Command requires admin privileges.\n");
            }
            if (!args.get(1).equals("Thunderbolt Bridge")) {
                return Result.fail(4, args.get(1) + " is not a recognized network service.\n** Error: The parameters were not valid.\n");
            }
            mac.setThunderboltBridgeActive(args.get(2).equalsIgnoreCase("on"));
            return Result.ok("");
        }
        return Result.fail(4, "networksetup: the simulator answers -listallhardwareports and -getnetworkserviceenabled|-setnetworkserviceenabled \"Thunderbolt Bridge\" [on|off]\n");
    }

    private Result ifconfig(List<String> args, boolean root, SimulatedMac.Snapshot state) {
        List<MacosOutput.Interface> interfaces = fleet.interfaces(mac);
        if (args.isEmpty()) {
            return Result.ok(MacosOutput.ifconfig(interfaces));
        }
        String name = args.getFirst();
        Optional<MacosOutput.Interface> face = interfaces.stream().filter(i -> i.name().equals(name)).findFirst();
        if (face.isEmpty()) {
            return Result.fail(1, "ifconfig: interface " + name + " does not exist\n");
        }
        if (args.size() == 1) {
            String all = MacosOutput.ifconfig(List.of(face.get()));
            return Result.ok(all.substring(all.indexOf(name + ":")));
        }
        if (args.size() >= 5 && args.get(1).equals("inet") && args.get(3).equals("netmask")) {
            if (!root) {
                return Result.fail(1, "ifconfig: ioctl (SIOCAIFADDR): Operation not permitted\n");
            }
            mac.setIpv4(name, args.get(2) + "/" + prefixOf(args.get(4)));
            return Result.ok("");
        }
        return Result.fail(1, "ifconfig: the simulator answers ifconfig [IFACE] and ifconfig IFACE inet ADDRESS netmask MASK\n");
    }

    private static int prefixOf(String netmask) {
        if (netmask.startsWith("0x")) {
            return Long.bitCount(Long.parseLong(netmask.substring(2), 16));
        }
        int bits = 0;
        for (String octet : netmask.split("\\.")) {
            bits += Integer.bitCount(Integer.parseInt(octet));
        }
        return bits;
    }

    private Result rdmaCtl(List<String> args, SimulatedMac.Snapshot state) {
        String verb = args.isEmpty() ? "" : args.getFirst();
        return switch (verb) {
            case "status" -> Result.ok(state.rdmaEnabled() ? "enabled\n" : "disabled\n");
            case "enable", "disable" -> Result.fail(77, "rdma_ctl: This tool needs to be executed from Recovery OS.\n");
            default -> Result.fail(64, "usage: rdma_ctl status|enable|disable\n");
        };
    }

    private Result ibvDevinfo(List<String> args, SimulatedMac.Snapshot state) {
        if (!state.rdmaEnabled()) {
            return Result.fail(255, "No IB devices found\n");
        }
        List<MacosOutput.RdmaDevice> devices = fleet.rdmaDevices(mac);
        int device = args.indexOf("-d");
        if (device >= 0 && device + 1 < args.size()) {
            String name = args.get(device + 1);
            devices = devices.stream().filter(d -> d.name().equals(name)).toList();
            if (devices.isEmpty()) {
                return Result.fail(255, "IB device '" + name + "' wasn't found\n");
            }
        }
        return Result.ok(MacosOutput.ibvDevinfo(devices));
    }

    private Result profiles(List<String> args, boolean root, SimulatedMac.Snapshot state) {
        if (args.size() >= 3 && args.getFirst().equals("status") && args.contains("bootstraptoken")) {
            return Result.ok(MacosOutput.bootstrapTokenStatus(state.mdmEnrolled(), state.bootstrapTokenEscrowed()));
        }
        if (args.size() >= 3 && args.getFirst().equals("status") && args.contains("enrollment")) {
            return Result.ok("Enrolled via DEP: No\nMDM enrollment: " + (state.mdmEnrolled() ? "Yes (User Approved)" : "No") + "\n");
        }
        if (args.size() >= 3 && args.getFirst().equals("install") && args.contains("bootstraptoken")) {
            if (!root) {
                return Result.fail(1, "profiles: this command requires root privileges\n");
            }
            if (!state.mdmEnrolled()) {
                return Result.fail(1, "profiles: Bootstrap Token functionality is not supported by the server.\n");
            }
            String user = valueAfter(args, "-user");
            String password = valueAfter(args, "-password");
            if (user == null || password == null || !mac.volumeOwnerPasswordMatches(user, password)) {
                return Result.fail(1, "profiles: Unable to authenticate user information.\n");
            }
            mac.setBootstrapTokenEscrowed(true);
            return Result.ok("profiles: Checking bootstrap token status...\nprofiles: Bootstrap Token escrowed\n");
        }
        return Result.fail(1, "profiles: the simulator answers status -type bootstraptoken and install -type bootstraptoken\n");
    }

    private static String valueAfter(List<String> args, String flag) {
        int index = args.indexOf(flag);
        return index >= 0 && index + 1 < args.size() ? args.get(index + 1) : null;
    }

    private Result sysctl(List<String> args, SimulatedMac.Snapshot state) {
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
                default -> null;
            };
            if (value == null) {
                return new Result(out.toString(), "sysctl: unknown oid '" + name + "'\n", 1, null);
            }
            out.append(valueOnly ? "" : name + ": ").append(value).append('\n');
        }
        return Result.ok(out.toString());
    }

    private Result uname(List<String> args, SimulatedMac.Snapshot state) {
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

    /** df -h /: layout from memory of macOS (marked invented in SOURCES.md); a disk-full fault shows 100%. */
    private Result df() {
        boolean full = mac.faults().diskFull;
        return Result.ok("Filesystem        Size    Used   Avail Capacity iused ifree %iused  Mounted on\n"
                + "/dev/disk3s1s1   1.8Ti    " + (full ? "1.8Ti     0Bi   100%" : " 12Gi   1.6Ti     1%")
                + "    453k  4.3G    0%   /\n");
    }

    private Result cat(List<String> args) {
        StringBuilder out = new StringBuilder();
        for (String path : args) {
            Path file = mac.resolve(path);
            if (!Files.isRegularFile(file)) {
                return new Result(out.toString(), "cat: " + path + ": No such file or directory\n", 1, null);
            }
            try {
                out.append(Files.readString(file));
            } catch (IOException e) {
                return new Result(out.toString(), "cat: " + path + ": " + e.getMessage() + "\n", 1, null);
            }
        }
        return Result.ok(out.toString());
    }

    private Result ls(List<String> args) {
        List<String> paths = args.stream().filter(a -> !a.startsWith("-")).toList();
        String path = paths.isEmpty() ? "." : paths.getFirst();
        Path directory = mac.resolve(path);
        if (Files.isRegularFile(directory)) {
            return Result.ok(path + "\n");
        }
        if (!Files.isDirectory(directory)) {
            return Result.fail(1, "ls: " + path + ": No such file or directory\n");
        }
        try (var entries = Files.list(directory)) {
            StringBuilder out = new StringBuilder();
            entries.map(p -> p.getFileName().toString()).sorted().forEach(n -> out.append(n).append('\n'));
            return Result.ok(out.toString());
        } catch (IOException e) {
            return Result.fail(1, "ls: " + path + ": " + e.getMessage() + "\n");
        }
    }

    private Result mkdir(List<String> args) {
        for (String path : args) {
            if (path.startsWith("-")) {
                continue;
            }
            try {
                Files.createDirectories(mac.resolve(path));
            } catch (IOException e) {
                return Result.fail(1, "mkdir: " + path + ": " + e.getMessage() + "\n");
            }
        }
        return Result.ok("");
    }

    private Result rm(List<String> args) {
        boolean force = args.stream().anyMatch(a -> a.startsWith("-") && a.contains("f"));
        for (String path : args) {
            if (path.startsWith("-")) {
                continue;
            }
            try {
                if (!Files.deleteIfExists(mac.resolve(path)) && !force) {
                    return Result.fail(1, "rm: " + path + ": No such file or directory\n");
                }
            } catch (IOException e) {
                return Result.fail(1, "rm: " + path + ": " + e.getMessage() + "\n");
            }
        }
        return Result.ok("");
    }

    private Result test(List<String> args) {
        List<String> words = new ArrayList<>(args);
        words.remove("]");
        if (words.size() != 2) {
            return Result.fail(2, "");
        }
        Path path = mac.resolve(words.get(1));
        boolean holds = switch (words.getFirst()) {
            case "-e" -> Files.exists(path);
            case "-f" -> Files.isRegularFile(path);
            case "-d" -> Files.isDirectory(path);
            case "-x" -> Files.isExecutable(path);
            default -> false;
        };
        return holds ? Result.ok("") : Result.fail(1, "");
    }

    private static final String OPENSSH_LABEL = "com.openssh.sshd";

    /** pmset -g [live|custom] reads; pmset [-a|-c] SETTING VALUE... changes (root only, as pmset(1) says). */
    private Result pmset(List<String> args, boolean root, SimulatedMac.Snapshot state) {
        if (args.isEmpty() || args.getFirst().equals("-g")) {
            String what = args.size() > 1 ? args.get(1) : "live";
            return switch (what) {
                case "live" -> Result.ok(MacosOutput.pmsetLive(state.powerSettings()));
                case "custom" -> Result.ok(MacosOutput.pmsetCustom(state.powerSettings()));
                default -> Result.fail(1, "pmset: the simulator answers -g, -g live and -g custom\n");
            };
        }
        List<String> pairs = new ArrayList<>(args);
        if (List.of("-a", "-c", "-b", "-u").contains(pairs.getFirst())) {
            pairs.removeFirst();
        }
        if (pairs.isEmpty() || pairs.size() % 2 != 0) {
            return Result.fail(1, "Usage: pmset [-a | -b | -c | -u] [setting value] [...]\n");
        }
        if (!root) {
            return Result.fail(1, "'pmset' must be run as root...\n");
        }
        for (int i = 0; i < pairs.size(); i += 2) {
            String name = pairs.get(i);
            if (name.equals("dim")) {
                name = "displaysleep";
            } else if (name.equals("spindown")) {
                name = "disksleep";
            }
            try {
                mac.setPowerSetting(name, pairs.get(i + 1));
            } catch (IllegalArgumentException e) {
                return Result.fail(1, "Usage: pmset [-a | -b | -c | -u] [setting value] [...]\n");
            }
        }
        return Result.ok("");
    }

    /** sshd -T prints the effective configuration from the files on disk; it needs the host keys, so root. */
    private Result sshd(List<String> args, boolean root) {
        if (!args.contains("-T") && !args.contains("-t")) {
            return Result.fail(1, "sshd: the simulator answers sshd -T and sshd -t\n");
        }
        if (!root) {
            return Result.fail(1, "sshd: no hostkeys available -- exiting.\n");
        }
        Path dropIns = mac.resolve("/etc/ssh/sshd_config.d");
        List<String> contents = new ArrayList<>();
        if (Files.isDirectory(dropIns)) {
            try (var files = Files.list(dropIns)) {
                for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".conf")).sorted().toList()) {
                    contents.add(Files.readString(file));
                }
            } catch (IOException e) {
                return Result.fail(1, "sshd: " + e.getMessage() + "\n");
            }
        }
        return args.contains("-T") ? Result.ok(MacosOutput.sshdEffective(contents)) : Result.ok("");
    }

    /** install [-m MODE] [-o OWNER] [-g GROUP] SOURCE DESTINATION: system directories need root. */
    private Result install(List<String> args, boolean root) {
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (List.of("-m", "-o", "-g").contains(arg)) {
                i++;
            } else if (arg.startsWith("-")) {
                continue;
            } else {
                paths.add(arg);
            }
        }
        if (paths.size() != 2) {
            return Result.fail(64, "usage: install [-bCcpSsv] [-B suffix] [-f flags] [-g group] [-m mode] [-o owner] file1 file2\n");
        }
        String destination = paths.get(1);
        boolean system = !destination.startsWith("/Users/") && !destination.startsWith("/tmp/") && !destination.startsWith("/private/tmp/");
        if (system && !root) {
            return Result.fail(71, "install: " + destination + ": Permission denied\n");
        }
        Path source = mac.resolve(paths.get(0));
        if (!Files.isRegularFile(source)) {
            return Result.fail(71, "install: " + paths.get(0) + ": No such file or directory\n");
        }
        try {
            Path target = mac.resolve(destination);
            Files.createDirectories(target.getParent());
            Files.copy(source, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            return Result.fail(71, "install: " + destination + ": " + e.getMessage() + "\n");
        }
        return Result.ok("");
    }

    private Result launchctl(List<String> args, boolean root) {
        if (args.isEmpty()) {
            return Result.fail(64, "Usage: launchctl <subcommand> ... | help [subcommand]\n");
        }
        String verb = args.getFirst();
        Launchd launchd = mac.launchd();
        boolean needsRoot = !verb.equals("print") && !verb.equals("list");
        if (needsRoot && !root) {
            String prefix = switch (verb) {
                case "bootstrap" -> "Bootstrap failed: 1: Operation not permitted\n";
                case "bootout" -> "Boot-out failed: 1: Operation not permitted\n";
                default -> "Not privileged to " + verb + " service.\n";
            };
            return Result.fail(1, prefix);
        }
        Launchd.Outcome outcome;
        switch (verb) {
            case "bootstrap" -> {
                if (args.size() != 3 || !args.get(1).equals("system")) {
                    return Result.fail(64, "Usage: launchctl bootstrap system <plist path>\n");
                }
                outcome = launchd.bootstrap(args.get(2));
            }
            case "bootout" -> {
                String label;
                if (args.size() == 2 && args.get(1).startsWith("system/")) {
                    label = args.get(1).substring("system/".length());
                } else if (args.size() == 3 && args.get(1).equals("system")) {
                    label = launchd.labelOf(args.get(2)).orElse(args.get(2));
                } else {
                    return Result.fail(64, "Usage: launchctl bootout system/<label> | system <plist path>\n");
                }
                outcome = launchd.bootout(label);
            }
            case "kickstart" -> {
                boolean kill = args.contains("-k");
                String target = args.getLast();
                if (!target.startsWith("system/")) {
                    return Result.fail(64, "Usage: launchctl kickstart [-k] system/<label>\n");
                }
                if (target.equals("system/" + OPENSSH_LABEL)) {
                    // macOS's sshd is launched per connection (inetdCompatibility), so new connections already read
                    // the new configuration; restarting the listener succeeds and changes nothing else.
                    return Result.ok("");
                }
                outcome = launchd.kickstart(target.substring("system/".length()), kill);
            }
            case "enable", "disable" -> {
                if (args.size() != 2 || !args.get(1).startsWith("system/")) {
                    return Result.fail(64, "Usage: launchctl " + verb + " system/<label>\n");
                }
                String label = args.get(1).substring("system/".length());
                outcome = verb.equals("enable") ? launchd.enable(label) : launchd.disable(label);
            }
            case "print" -> {
                if (args.size() != 2 || !args.get(1).startsWith("system/")) {
                    return Result.fail(64, "Usage: launchctl print system/<label>\n");
                }
                String label = args.get(1).substring("system/".length());
                return launchd.print(label).map(Result::ok)
                        .orElse(Result.fail(113, "Could not find service \"" + label + "\" in domain for system\n"));
            }
            case "list" -> {
                StringBuilder out = new StringBuilder("PID\tStatus\tLabel\n");
                for (String label : launchd.labels()) {
                    out.append(launchd.pid(label).map(String::valueOf).orElse("-")).append("\t0\t").append(label).append('\n');
                }
                return Result.ok(out.toString());
            }
            default -> {
                return Result.fail(64, "Unrecognized subcommand: " + verb + "\n");
            }
        }
        return new Result("", outcome.stderr(), outcome.exitCode(), null);
    }

    private Result shutdown(List<String> args, boolean root) {
        if (!root) {
            return Result.fail(1, "shutdown: NOT super-user\n");
        }
        if (args.contains("-r")) {
            return rebootNow("Shutdown NOW!\n");
        }
        if (args.contains("-h")) {
            return new Result("Shutdown NOW!\n", "", 0, () -> fleet.powerOff(mac.name()));
        }
        return Result.fail(1, "usage: shutdown [-] [-h [-u] [-n] | -r [-n] | -s | -k] time [warning-message ...]\n");
    }

    private Result rebootNow(String message) {
        return new Result(message, "", 0, () -> fleet.reboot(mac.name()));
    }

    /** What a person can type in Recovery's Terminal. */
    Result recovery(String commandLine) {
        List<String> words;
        try {
            words = ShellWords.parse(commandLine).getFirst().words();
        } catch (IllegalArgumentException e) {
            return Result.fail(1, e.getMessage() + "\n");
        }
        if (words.isEmpty()) {
            return Result.ok("");
        }
        String program = words.getFirst();
        List<String> args = words.subList(1, words.size());
        SimulatedMac.Snapshot state = mac.snapshot();
        return switch (program) {
            case "rdma_ctl" -> {
                String verb = args.isEmpty() ? "" : args.getFirst();
                yield switch (verb) {
                    case "status" -> Result.ok((state.rdmaAfterReboot() != null ? state.rdmaAfterReboot() : state.rdmaEnabled()) ? "enabled\n" : "disabled\n");
                    case "enable" -> {
                        if (!state.spec().thunderbolt5()) {
                            yield Result.fail(1, "rdma_ctl: RDMA over Thunderbolt requires Thunderbolt 5 hardware.\n");
                        }
                        mac.stageRdma(true);
                        yield Result.ok("");
                    }
                    case "disable" -> {
                        mac.stageRdma(false);
                        yield Result.ok("");
                    }
                    default -> Result.fail(64, "usage: rdma_ctl status|enable|disable\n");
                };
            }
            case "csrutil" -> Result.ok("System Integrity Protection status: enabled.\n");
            case "reboot" -> new Result("", "", 0, () -> fleet.reboot(mac.name()));
            case "shutdown" -> new Result("", "", 0, () -> fleet.powerOff(mac.name()));
            case "sw_vers" -> Result.ok(MacosOutput.swVers(state.release()));
            default -> Result.fail(127, "-bash: " + program + ": command not found\n");
        };
    }

    static String garbage(String output) {
        StringBuilder noise = new StringBuilder();
        java.util.Random random = new java.util.Random(output.hashCode());
        int length = Math.max(16, output.length());
        for (int i = 0; i < length; i++) {
            noise.append((char) (0x21 + random.nextInt(0x5d)));
            if (random.nextInt(40) == 0) {
                noise.append('\n');
            }
        }
        return noise.append('\n').toString().toLowerCase(Locale.ROOT);
    }
}
