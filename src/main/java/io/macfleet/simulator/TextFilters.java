package io.macfleet.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The few text filters scripts put after a pipe (grep, head, tail, wc -l, sort, awk '{print $N}'), reading the
 * previous command's output. Enough for checks like {@code ibv_devinfo | grep state}; not a full userland.
 */
final class TextFilters implements SimulatedProgram {
    private static final Pattern AWK_PRINT = Pattern.compile("\\{\\s*print\\s+\\$(\\d+)\\s*}");

    @Override
    public List<String> names() {
        return List.of("grep", "head", "tail", "wc", "awk", "sort");
    }

    @Override
    public MacShell.Result run(Call call) {
        if ((call.program().equals("head") || call.program().equals("tail") || call.program().equals("wc")) && call.pipeInput() == null) {
            // head -n N FILE / tail -n N FILE / wc -l FILE: the file of the simulated Mac (a daemon's log).
            List<String> args = call.arguments();
            for (int i = 0; i < args.size(); i++) {
                if (args.get(i).equals("-n")) {
                    i++;
                } else if (!args.get(i).startsWith("-")) {
                    java.nio.file.Path file = call.mac().resolve(args.get(i));
                    try {
                        String content = java.nio.file.Files.readString(file, java.nio.charset.StandardCharsets.UTF_8);
                        List<String> options = new java.util.ArrayList<>(args);
                        options.remove(i);
                        return run(call.program(), options, content);
                    } catch (java.io.IOException e) {
                        return MacShell.Result.fail(1, call.program() + ": " + args.get(i) + ": No such file or directory\n");
                    }
                }
            }
        }
        return run(call.program(), call.arguments(), call.pipeInput() == null ? "" : call.pipeInput());
    }

    static MacShell.Result run(String program, List<String> args, String input) {
        List<String> lines = input.lines().toList();
        return switch (program) {
            case "grep" -> grep(args, lines);
            case "head", "tail" -> {
                int count = 10;
                for (int i = 0; i < args.size(); i++) {
                    if (args.get(i).equals("-n") && i + 1 < args.size()) {
                        count = Integer.parseInt(args.get(i + 1));
                    } else if (args.get(i).matches("-\\d+")) {
                        count = Integer.parseInt(args.get(i).substring(1));
                    }
                }
                int size = lines.size();
                List<String> kept = program.equals("head") ? lines.subList(0, Math.min(count, size)) : lines.subList(Math.max(0, size - count), size);
                yield MacShell.Result.ok(join(kept));
            }
            case "wc" -> MacShell.Result.ok(String.format(Locale.ROOT, "%8d\n", lines.size()));
            case "sort" -> {
                List<String> sorted = new ArrayList<>(lines);
                sorted.sort(null);
                yield MacShell.Result.ok(join(sorted));
            }
            case "awk" -> {
                Matcher matcher = args.isEmpty() ? null : AWK_PRINT.matcher(args.getLast());
                if (matcher == null || !matcher.matches()) {
                    yield MacShell.Result.fail(2, "awk: the macfleet simulator supports only '{print $N}'\n");
                }
                int field = Integer.parseInt(matcher.group(1));
                List<String> fields = new ArrayList<>();
                for (String line : lines) {
                    String[] parts = line.trim().split("\\s+");
                    fields.add(field == 0 ? line : field <= parts.length ? parts[field - 1] : "");
                }
                yield MacShell.Result.ok(join(fields));
            }
            default -> MacShell.Result.fail(127, "zsh: command not found: " + program + "\n");
        };
    }

    private static MacShell.Result grep(List<String> args, List<String> lines) {
        boolean quiet = false;
        boolean invert = false;
        boolean ignoreCase = false;
        boolean fixed = false;
        boolean count = false;
        String pattern = null;
        for (String arg : args) {
            if (pattern == null && arg.startsWith("-") && arg.length() > 1) {
                for (char flag : arg.substring(1).toCharArray()) {
                    switch (flag) {
                        case 'q' -> quiet = true;
                        case 'v' -> invert = true;
                        case 'i' -> ignoreCase = true;
                        case 'F' -> fixed = true;
                        case 'c' -> count = true;
                        case 'E' -> { }
                        default -> {
                            return MacShell.Result.fail(2, "grep: the macfleet simulator supports -q -v -i -F -E -c\n");
                        }
                    }
                }
            } else if (pattern == null) {
                pattern = arg;
            }
        }
        if (pattern == null) {
            return MacShell.Result.fail(2, "usage: grep [-qviFEc] pattern\n");
        }
        Pattern regex = Pattern.compile(fixed ? Pattern.quote(pattern) : pattern, ignoreCase ? Pattern.CASE_INSENSITIVE : 0);
        List<String> matched = new ArrayList<>();
        for (String line : lines) {
            if (regex.matcher(line).find() != invert) {
                matched.add(line);
            }
        }
        int exit = matched.isEmpty() ? 1 : 0;
        if (quiet) {
            return new MacShell.Result("", "", exit, null);
        }
        return new MacShell.Result(count ? matched.size() + "\n" : join(matched), "", exit, null);
    }

    private static String join(List<String> lines) {
        return lines.isEmpty() ? "" : String.join("\n", lines) + "\n";
    }
}
