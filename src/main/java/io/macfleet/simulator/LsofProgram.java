package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code lsof -nP -iTCP:PORT -sTCP:LISTEN}: which process listens on a TCP port of this Mac. A simulated Mac's
 * processes are processes of this host, so the answer is read from the host's /proc/net/tcp (listening sockets bound
 * to one of this Mac's addresses or to every address) and /proc/PID/fd (the socket's process). The layout is lsof's
 * (COMMAND cut to 9 characters, as lsof does; composed from lsof's documented columns, not captured on a Mac); exit 1
 * and no output when nothing listens, as lsof does. Only this form is answered.
 */
final class LsofProgram implements SimulatedProgram {

    private static final Pattern PORT = Pattern.compile("-iTCP:(\\d+)");

    @Override
    public List<String> names() {
        return List.of("lsof");
    }

    @Override
    public Result run(Call call) {
        Matcher port = PORT.matcher(String.join(" ", call.arguments()));
        if (!port.find() || !call.arguments().contains("-sTCP:LISTEN")) {
            return Result.fail(1, "lsof: the simulator answers only lsof -nP -iTCP:PORT -sTCP:LISTEN\n");
        }
        int wanted = Integer.parseInt(port.group(1));
        Set<String> own = new java.util.HashSet<>();
        own.add(call.mac().address());
        call.state().ipv4().values().forEach(address -> own.add(address.replaceFirst("/.*$", "")));
        Map<Long, String> listening = new HashMap<>();
        try {
            // IPv4 sockets, and IPv6 ones (a JVM's) bound to IPv4-mapped addresses or to every address.
            for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
                Path file = Path.of(table);
                if (!Files.isReadable(file)) {
                    continue;
                }
                List<String> lines = Files.readAllLines(file);
                for (String line : lines.subList(1, lines.size())) {
                    String[] fields = line.trim().split("\\s+");
                    String[] local = fields[1].split(":");
                    if (!fields[3].equals("0A") || Integer.parseInt(local[1], 16) != wanted) {
                        continue;
                    }
                    String address = address(local[0]);
                    if (address != null && (address.equals("0.0.0.0") || own.contains(address))) {
                        listening.put(Long.parseLong(fields[9]), (address.equals("0.0.0.0") ? "*" : address) + ":" + wanted);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return Result.fail(1, "lsof: cannot read the sockets: " + e.getMessage() + "\n");
        }
        if (listening.isEmpty()) {
            return new Result("", "", 1, null);
        }
        List<String> rows = new ArrayList<>();
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            for (Path process : processes.filter(path -> path.getFileName().toString().matches("\\d+")).toList()) {
                try (Stream<Path> descriptors = Files.list(process.resolve("fd"))) {
                    for (Path descriptor : descriptors.toList()) {
                        String target = Files.readSymbolicLink(descriptor).toString();
                        if (!target.startsWith("socket:[")) {
                            continue;
                        }
                        long inode = Long.parseLong(target.substring(8, target.length() - 1));
                        if (listening.containsKey(inode)) {
                            String command = Files.readString(process.resolve("comm")).strip();
                            rows.add(String.format(Locale.ROOT, "%-9s %5s %4s %4su  IPv4 0x%016x      0t0  TCP %s (LISTEN)",
                                    command.length() > 9 ? command.substring(0, 9) : command, process.getFileName(), "root",
                                    descriptor.getFileName(), inode, listening.get(inode)));
                        }
                    }
                } catch (IOException | RuntimeException unreadable) {
                    // another user's process, or gone meanwhile
                }
            }
        } catch (IOException e) {
            return Result.fail(1, "lsof: cannot list processes: " + e.getMessage() + "\n");
        }
        if (rows.isEmpty()) {
            return new Result("", "", 1, null);
        }
        return Result.ok("COMMAND     PID USER   FD   TYPE             DEVICE SIZE/OFF NODE NAME\n" + String.join("\n", rows) + "\n");
    }

    /**
     * /proc/net/tcp's little-endian hex IPv4 address as dotted quad; of /proc/net/tcp6, the IPv4-mapped part, "0.0.0.0"
     * for the IPv6 wildcard, null for any other IPv6 address.
     */
    private static String address(String hex) {
        if (hex.length() == 32) {
            if (hex.equals("0".repeat(32))) {
                return "0.0.0.0";
            }
            if (!hex.startsWith("0000000000000000FFFF0000")) {
                return null;
            }
            hex = hex.substring(24);
        }
        long value = Long.parseLong(hex, 16);
        return (value & 0xff) + "." + ((value >> 8) & 0xff) + "." + ((value >> 16) & 0xff) + "." + ((value >> 24) & 0xff);
    }
}
