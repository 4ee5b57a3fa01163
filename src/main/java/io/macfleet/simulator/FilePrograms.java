package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * echo, true, false, cat, ls, mkdir, rm, mv, test ([), chmod, chown and stat: the file and shell basics, on the machine's own
 * directory, with the owners and modes {@link FileOwners} keeps (the SSH user cannot change what root owns).
 */
final class FilePrograms implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("echo", "true", "false", "cat", "ls", "mkdir", "rm", "mv", "test", "[", "chmod", "chown", "stat");
    }

    @Override
    public Result run(Call call) {
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        String user = call.root() ? "root" : call.fleet().sshUser();
        return switch (call.program()) {
            case "echo" -> Result.ok(String.join(" ", args) + "\n");
            case "true" -> Result.ok("");
            case "false" -> Result.fail(1, "");
            case "cat" -> cat(mac, args, user);
            case "ls" -> ls(mac, args);
            case "mkdir" -> mkdir(mac, args, user);
            case "rm" -> rm(mac, args, user);
            case "mv" -> mv(mac, args, user);
            case "test", "[" -> test(mac, args);
            case "chmod" -> chmod(mac, args, user);
            case "chown" -> chown(mac, args, user);
            case "stat" -> stat(mac, args);
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    /**
     * {@code chmod OCTAL FILE...}: the owner's execute bit is what matters on the simulated file system (launchd and the
     * shell run an executable file as a real program); symbolic modes and ownership are accepted and change nothing.
     */
    private static Result chmod(SimulatedMac mac, List<String> args, String user) {
        if (args.size() < 2) {
            return Result.fail(64, "usage: chmod [-fhv] [-R [-H | -L | -P]] [-a | +a | =a  [i][# [ n]]] mode|entry file ...\n");
        }
        if (!args.getFirst().matches("[0-7]{3,4}")) {
            return Result.ok("");
        }
        int mode = Integer.parseInt(args.getFirst(), 8);
        for (String path : args.subList(1, args.size())) {
            Path file = mac.resolve(path);
            if (!Files.exists(file)) {
                return Result.fail(1, "chmod: " + path + ": No such file or directory\n");
            }
            if (!user.equals("root") && !mac.fileOwners().of(file).user().equals(user)) {
                return Result.fail(1, "chmod: Unable to change file mode on " + path + ": Operation not permitted\n");
            }
            file.toFile().setExecutable((mode & 0100) != 0, false);
            mac.fileOwners().set(file, null, null, mode);
        }
        return Result.ok("");
    }

    /** {@code mv [-f] SOURCE TARGET}: one rename, replacing the target, as rename(2) does; macOS's messages. */
    private static Result mv(SimulatedMac mac, List<String> args, String user) {
        List<String> paths = args.stream().filter(argument -> !argument.equals("-f")).toList();
        if (paths.size() != 2 || paths.getFirst().startsWith("-")) {
            return Result.fail(64, "usage: mv [-f | -i | -n] [-hv] source target\n       mv [-f | -i | -n] [-v] source ... directory\n");
        }
        Path source = mac.resolve(paths.get(0));
        Path target = mac.resolve(paths.get(1));
        if (Files.isDirectory(target)) {
            target = target.resolve(source.getFileName().toString());
        }
        if (!Files.exists(source, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return Result.fail(1, "mv: rename " + paths.get(0) + " to " + paths.get(1) + ": No such file or directory\n");
        }
        if (!mac.fileOwners().mayChangeNamesIn(user, source.getParent()) || !mac.fileOwners().mayChangeNamesIn(user, target.getParent())) {
            return Result.fail(1, "mv: rename " + paths.get(0) + " to " + paths.get(1) + ": Permission denied\n");
        }
        try {
            FileOwners.Owner owner = mac.fileOwners().of(source);
            Files.move(source, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            mac.fileOwners().forget(source);
            mac.fileOwners().set(target, owner.user(), owner.group(), owner.mode());
        } catch (IOException e) {
            return Result.fail(1, "mv: rename " + paths.get(0) + " to " + paths.get(1) + ": " + e.getMessage() + "\n");
        }
        return Result.ok("");
    }

    private static Result cat(SimulatedMac mac, List<String> args, String user) {
        StringBuilder out = new StringBuilder();
        for (String path : args) {
            Path file = mac.resolve(path);
            if (!Files.isRegularFile(file)) {
                return new Result(out.toString(), "cat: " + path + ": No such file or directory\n", 1, null);
            }
            if (!mac.fileOwners().mayRead(user, file)) {
                return new Result(out.toString(), "cat: " + path + ": Permission denied\n", 1, null);
            }
            try {
                out.append(Files.readString(file));
            } catch (IOException e) {
                return new Result(out.toString(), "cat: " + path + ": " + e.getMessage() + "\n", 1, null);
            }
        }
        return Result.ok(out.toString());
    }

    private static Result ls(SimulatedMac mac, List<String> args) {
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

    private static Result mkdir(SimulatedMac mac, List<String> args, String user) {
        for (String path : args) {
            if (path.startsWith("-")) {
                continue;
            }
            Path directory = mac.resolve(path);
            if (!Files.isDirectory(directory) && !mac.fileOwners().mayChangeNamesIn(user, directory.getParent())) {
                return Result.fail(1, "mkdir: " + path + ": Permission denied\n");
            }
            try {
                Files.createDirectories(mac.resolve(path));
            } catch (IOException e) {
                return Result.fail(1, "mkdir: " + path + ": " + e.getMessage() + "\n");
            }
        }
        return Result.ok("");
    }

    private static Result rm(SimulatedMac mac, List<String> args, String user) {
        boolean force = args.stream().anyMatch(a -> a.startsWith("-") && a.contains("f"));
        boolean recursive = args.stream().anyMatch(a -> a.startsWith("-") && (a.contains("r") || a.contains("R")));
        for (String path : args) {
            if (path.startsWith("-")) {
                continue;
            }
            Path file = mac.resolve(path);
            if (Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS) && !mac.fileOwners().mayChangeNamesIn(user, file.getParent())) {
                return Result.fail(1, "rm: " + path + ": Permission denied\n");
            }
            mac.fileOwners().forget(file);
            try {
                if (recursive && Files.isDirectory(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    // rm -r: the tree, deepest first (the SSH user's own staging directories; root's need sudo as before).
                    try (var tree = Files.walk(file)) {
                        for (Path inside : tree.sorted(java.util.Comparator.reverseOrder()).toList()) {
                            mac.fileOwners().forget(inside);
                            Files.delete(inside);
                        }
                    }
                    continue;
                }
                if (!Files.deleteIfExists(file) && !force) {
                    return Result.fail(1, "rm: " + path + ": No such file or directory\n");
                }
            } catch (IOException e) {
                return Result.fail(1, "rm: " + path + ": " + e.getMessage() + "\n");
            }
        }
        return Result.ok("");
    }

    /** {@code chown [-R] OWNER[:GROUP] FILE...}: root only (macOS lets no other user give a file away). */
    private static Result chown(SimulatedMac mac, List<String> args, String user) {
        List<String> words = args.stream().filter(argument -> !argument.startsWith("-")).toList();
        if (words.size() < 2) {
            return Result.fail(1, "usage: chown [-fhnvx] [-R [-H | -L | -P]] owner[:group] file ...\n");
        }
        boolean recursive = args.stream().anyMatch(argument -> argument.matches("-[fhnvxHLP]*R[fhnvxHLP]*"));
        String[] ownerGroup = words.getFirst().split(":", 2);
        for (String path : words.subList(1, words.size())) {
            Path file = mac.resolve(path);
            if (!Files.exists(file)) {
                return Result.fail(1, "chown: " + path + ": No such file or directory\n");
            }
            if (!user.equals("root")) {
                return Result.fail(1, "chown: " + path + ": Operation not permitted\n");
            }
            String owner = ownerGroup[0].isEmpty() ? null : mac.localDirectory().userNamed(ownerGroup[0]).orElse(null);
            if (!ownerGroup[0].isEmpty() && owner == null) {
                return Result.fail(1, "chown: " + ownerGroup[0] + ": illegal user name\n");
            }
            String group = ownerGroup.length < 2 ? null : mac.localDirectory().groupNamed(ownerGroup[1]).orElse(null);
            if (ownerGroup.length == 2 && group == null) {
                return Result.fail(1, "chown: " + ownerGroup[1] + ": illegal group name\n");
            }
            if (recursive) {
                // -R without -H/-L follows no symbolic link (-P, chown(8)'s default).
                try (java.util.stream.Stream<Path> tree = Files.walk(file)) {
                    for (Path each : tree.toList()) {
                        mac.fileOwners().set(each, owner, group, null);
                    }
                } catch (java.io.IOException e) {
                    return Result.fail(1, "chown: " + path + ": " + e.getMessage() + "\n");
                }
            } else {
                mac.fileOwners().set(file, owner, group, null);
            }
        }
        return Result.ok("");
    }

    /**
     * {@code stat -f FORMAT FILE...} as macOS's stat(1) formats: %Su owner, %Sg group, %Lp permission bits in octal,
     * %N the name, %z the size in bytes.
     */
    private static Result stat(SimulatedMac mac, List<String> args) {
        int format = args.indexOf("-f");
        if (format < 0 || format + 1 >= args.size() || format + 2 >= args.size()) {
            return Result.fail(1, "usage: stat [-FLnq] [-f format | -l | -r | -s | -x] [-t timefmt] [file|handle ...]\n");
        }
        String pattern = args.get(format + 1);
        StringBuilder out = new StringBuilder();
        for (String path : args.subList(format + 2, args.size())) {
            Path file = mac.resolve(path);
            if (!Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return new Result(out.toString(), "stat: " + path + ": stat: No such file or directory\n", 1, null);
            }
            FileOwners.Owner owner = mac.fileOwners().of(file);
            long size;
            try {
                size = Files.isDirectory(file) ? 64 : Files.size(file);
            } catch (IOException e) {
                size = 0;
            }
            out.append(pattern.replace("%Su", owner.user()).replace("%Sg", owner.group()).replace("%Lp", owner.modeOctal())
                    .replace("%N", path).replace("%z", Long.toString(size))).append('\n');
        }
        return Result.ok(out.toString());
    }

    private static Result test(SimulatedMac mac, List<String> args) {
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
}
