package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** echo, true, false, cat, ls, mkdir, rm, test ([), chmod and chown: the file and shell basics, on the machine's own directory. */
final class FilePrograms implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("echo", "true", "false", "cat", "ls", "mkdir", "rm", "mv", "test", "[", "chmod", "chown");
    }

    @Override
    public Result run(Call call) {
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        return switch (call.program()) {
            case "echo" -> Result.ok(String.join(" ", args) + "\n");
            case "true" -> Result.ok("");
            case "false" -> Result.fail(1, "");
            case "cat" -> cat(mac, args);
            case "ls" -> ls(mac, args);
            case "mkdir" -> mkdir(mac, args);
            case "rm" -> rm(mac, args);
            case "mv" -> mv(mac, args);
            case "test", "[" -> test(mac, args);
            case "chmod" -> chmod(mac, args);
            case "chown" -> Result.ok("");
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    /**
     * {@code chmod OCTAL FILE...}: the owner's execute bit is what matters on the simulated file system (launchd and the
     * shell run an executable file as a real program); symbolic modes and ownership are accepted and change nothing.
     */
    private static Result chmod(SimulatedMac mac, List<String> args) {
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
            file.toFile().setExecutable((mode & 0100) != 0, false);
        }
        return Result.ok("");
    }

    /** {@code mv [-f] SOURCE TARGET}: one rename, replacing the target, as rename(2) does; macOS's messages. */
    private static Result mv(SimulatedMac mac, List<String> args) {
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
        try {
            Files.move(source, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            return Result.fail(1, "mv: rename " + paths.get(0) + " to " + paths.get(1) + ": " + e.getMessage() + "\n");
        }
        return Result.ok("");
    }

    private static Result cat(SimulatedMac mac, List<String> args) {
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

    private static Result mkdir(SimulatedMac mac, List<String> args) {
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

    private static Result rm(SimulatedMac mac, List<String> args) {
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
