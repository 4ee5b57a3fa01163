package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** pmset, sshd, install and profiles: the settings provisioning changes (power, sshd drop-ins, installed files, the bootstrap token). */
final class SettingsPrograms implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("pmset", "sshd", "install", "profiles");
    }

    @Override
    public Result run(Call call) {
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        boolean root = call.root();
        SimulatedMac.Snapshot state = call.state();
        return switch (call.program()) {
            case "pmset" -> pmset(mac, args, root, state);
            case "sshd" -> sshd(mac, args, root);
            case "install" -> install(mac, args, root);
            case "profiles" -> profiles(call, mac, args, root, state);
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    /** pmset -g [live|custom] reads; pmset [-a|-c] SETTING VALUE... changes (root only, as pmset(1) says). */
    private static Result pmset(SimulatedMac mac, List<String> args, boolean root, SimulatedMac.Snapshot state) {
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
    private static Result sshd(SimulatedMac mac, List<String> args, boolean root) {
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

    /**
     * install -d [-m MODE] [-o OWNER] [-g GROUP] DIRECTORY...: creates the directories (system ones need root) and, as
     * BSD install does for existing ones too, sets their owner, group and mode (default root:wheel 755 for root).
     */
    private static Result installDirectories(SimulatedMac mac, List<String> args, boolean root) {
        Ownership ownership;
        try {
            ownership = Ownership.of(mac, args, root);
        } catch (IllegalArgumentException e) {
            return Result.fail(67, "install: " + e.getMessage() + "\n");
        }
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (List.of("-m", "-o", "-g").contains(arg)) {
                i++;
            } else if (!arg.startsWith("-")) {
                Path directory = mac.resolve(arg);
                boolean system = !arg.startsWith("/Users/") && !arg.startsWith("/tmp/");
                if ((system && !root) || (!root && !Files.isDirectory(directory) && !mac.fileOwners().mayChangeNamesIn(mac.sshUser(), directory.getParent()))) {
                    return Result.fail(71, "install: " + arg + ": Permission denied\n");
                }
                boolean existed = Files.isDirectory(directory);
                try {
                    Files.createDirectories(directory);
                } catch (java.io.IOException e) {
                    return Result.fail(71, "install: " + arg + ": " + e.getMessage() + "\n");
                }
                ownership.apply(mac, directory, 0755, existed);
            }
        }
        return Result.ok("");
    }

    /** install's -o, -g and -m: only root may name another owner; the defaults are the caller's. */
    private record Ownership(String user, String group, Integer mode, String callerUser, String callerGroup) {
        static Ownership of(SimulatedMac mac, List<String> args, boolean root) {
            String user = valueOf(args, "-o");
            String group = valueOf(args, "-g");
            String mode = valueOf(args, "-m");
            if (user != null && mac.localDirectory().userNamed(user).isEmpty()) {
                throw new IllegalArgumentException("unknown user " + user);
            }
            if (group != null && mac.localDirectory().groupNamed(group).isEmpty()) {
                throw new IllegalArgumentException("unknown group " + group);
            }
            if (!root && user != null && !user.equals(mac.sshUser())) {
                throw new IllegalArgumentException("chown/chgrp: Operation not permitted");
            }
            return new Ownership(user == null ? null : mac.localDirectory().userNamed(user).orElseThrow(),
                    group == null ? null : mac.localDirectory().groupNamed(group).orElseThrow(), mode == null ? null : Integer.parseInt(mode, 8),
                    root ? "root" : mac.sshUser(), root ? "wheel" : "staff");
        }

        /** A new file gets the caller's owner unless -o/-g say otherwise; an existing directory keeps what they do not name. */
        void apply(SimulatedMac mac, Path file, int defaultMode, boolean existed) {
            int bits = mode == null ? defaultMode : mode;
            mac.fileOwners().set(file, user != null || existed ? user : callerUser, group != null || existed ? group : callerGroup, bits);
            // The host file gets the same bits, so what reads it on the host (the daemon, a test) sees the mode too.
            java.util.Set<java.nio.file.attribute.PosixFilePermission> permissions = java.util.EnumSet.noneOf(java.nio.file.attribute.PosixFilePermission.class);
            java.nio.file.attribute.PosixFilePermission[] order = java.nio.file.attribute.PosixFilePermission.values();
            for (int bit = 0; bit < 9; bit++) {
                if ((bits & (0400 >> bit)) != 0) {
                    permissions.add(order[bit]);
                }
            }
            try {
                Files.setPosixFilePermissions(file, permissions);
            } catch (IOException | UnsupportedOperationException e) {
                file.toFile().setExecutable((bits & 0100) != 0, false);
            }
        }

        private static String valueOf(List<String> args, String flag) {
            int index = args.indexOf(flag);
            return index >= 0 && index + 1 < args.size() ? args.get(index + 1) : null;
        }
    }

    /** install [-m MODE] [-o OWNER] [-g GROUP] SOURCE DESTINATION: system directories need root. */
    private static Result install(SimulatedMac mac, List<String> args, boolean root) {
        if (args.contains("-d")) {
            return installDirectories(mac, args, root);
        }
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
        Ownership ownership;
        try {
            ownership = Ownership.of(mac, args, root);
        } catch (IllegalArgumentException e) {
            return Result.fail(67, "install: " + e.getMessage() + "\n");
        }
        Path target = mac.resolve(destination);
        if (!root && (!mac.fileOwners().mayRead(mac.sshUser(), source) || !mac.fileOwners().mayChangeNamesIn(mac.sshUser(), target.getParent()))) {
            return Result.fail(71, "install: " + destination + ": Permission denied\n");
        }
        try {
            Files.createDirectories(target.getParent());
            // install(1) writes a temporary file and renames it over the target: a running program keeps the old one.
            Path temporary = target.resolveSibling(".install-" + target.getFileName());
            Files.copy(source, temporary, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.move(temporary, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            return Result.fail(71, "install: " + destination + ": " + e.getMessage() + "\n");
        }
        ownership.apply(mac, target, 0755, false);
        return Result.ok("");
    }

    private static Result profiles(Call call, SimulatedMac mac, List<String> args, boolean root, SimulatedMac.Snapshot state) {
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
            // Without -user and -password, profiles asks for them on its terminal (the prompts scripts answer
            // with expect: "Enter the admin user name:", "Enter the password for user 'NAME':"); the password
            // is not echoed.
            String user = valueAfter(args, "-user");
            if (user == null) {
                user = call.prompt("Enter the admin user name: ", true);
            }
            String password = valueAfter(args, "-password");
            if (password == null && user != null) {
                password = call.prompt("Enter the password for user '" + user + "': ", false);
            }
            if (user == null || password == null || !mac.volumeOwnerPasswordMatches(user, password)) {
                return Result.fail(1, "profiles: Unable to authenticate user information.\n");
            }
            mac.setBootstrapTokenEscrowed(true);
            return Result.ok("profiles: Checking bootstrap token status...\nprofiles: Bootstrap Token escrowed\n");
        }
        return Result.fail(1, "profiles: the simulator answers status -type bootstraptoken and install -type bootstraptoken\n");
    }

    static String valueAfter(List<String> args, String flag) {
        int index = args.indexOf(flag);
        return index >= 0 && index + 1 < args.size() ? args.get(index + 1) : null;
    }
}
