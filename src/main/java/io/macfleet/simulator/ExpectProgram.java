package io.macfleet.simulator;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code /usr/bin/expect -c SCRIPT}: drives a program that only prompts on a terminal. macfleet needs it for
 * {@code profiles install -type bootstraptoken}, which takes the volume owner's password either as an argument
 * (which {@code ps} shows to every local user) or at its own terminal prompt; expect reads the password from its
 * standard input and types it at the prompt. The simulator understands the small part of Tcl and expect such
 * scripts use, one command per line: {@code set}, {@code log_user}, {@code gets stdin VAR},
 * {@code spawn [-noecho] PROGRAM ARGS}, {@code expect PATTERN} (a substring, as expect's unanchored glob
 * patterns match plain text), {@code expect eof}, {@code send [--] TEXT}, {@code catch wait VAR},
 * {@code exit [CODE]} with {@code [lindex LIST N]}, double-quoted words with backslash escapes and {@code $var}.
 * Anything else fails with Tcl's "invalid command name" error. The spawned program runs when the script waits
 * for its end; each prompt it shows is answered by the next {@code expect}/{@code send} pair whose pattern it
 * contains, as a real expect session would be (a prompt nobody expected gets no answer: expect times out).
 */
final class ExpectProgram implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("expect");
    }

    private record Exchange(String pattern, String answer) {
    }

    private static final class ScriptError extends RuntimeException {
        ScriptError(String message) {
            super(message);
        }
    }

    @Override
    public MacShell.Result run(Call call) {
        List<String> args = call.arguments();
        if (args.size() != 2 || !args.getFirst().equals("-c")) {
            return MacShell.Result.fail(1, "expect: the simulator runs scripts given with -c only\n");
        }
        Map<String, String> variables = new HashMap<>();
        List<Exchange> exchanges = new ArrayList<>();
        StringBuilder transcript = new StringBuilder();
        boolean logUser = true;
        List<String> spawned = null;
        MacShell.Result finished = null;
        for (String line : args.get(1).split("\n")) {
            List<String> words;
            try {
                words = words(line.strip(), variables);
            } catch (ScriptError e) {
                return MacShell.Result.fail(1, e.getMessage() + "\n    while executing\n\"" + line.strip() + "\"\n");
            }
            if (words.isEmpty() || words.getFirst().startsWith("#")) {
                continue;
            }
            String command = words.getFirst();
            List<String> rest = words.subList(1, words.size());
            switch (command) {
                case "set" -> {
                    if (rest.size() == 2) {
                        variables.put(rest.get(0), rest.get(1));
                    }
                }
                case "log_user" -> logUser = rest.isEmpty() || !rest.getFirst().equals("0");
                case "gets" -> {
                    String read = call.stdinLine().get();
                    variables.put(rest.size() > 1 ? rest.get(1) : "_", read == null ? "" : read);
                }
                case "spawn" -> {
                    List<String> program = new ArrayList<>(rest);
                    boolean quiet = !program.isEmpty() && program.getFirst().equals("-noecho");
                    if (quiet) {
                        program.removeFirst();
                    }
                    if (!quiet) {
                        transcript.append("spawn ").append(String.join(" ", program)).append("\r\n");
                    }
                    spawned = program;
                }
                case "expect" -> {
                    String pattern = rest.isEmpty() ? "" : rest.getFirst();
                    if (pattern.equals("eof")) {
                        finished = runSpawned(call, spawned, exchanges, transcript, finished);
                    } else {
                        exchanges.add(new Exchange(pattern.replace("*", ""), null));
                    }
                }
                case "send" -> {
                    String text = rest.isEmpty() ? "" : rest.getLast();
                    if (spawned == null) {
                        return MacShell.Result.fail(1, "send: spawn id exp0 not open\n    while executing\n\"" + line.strip() + "\"\n");
                    }
                    int last = exchanges.size() - 1;
                    if (last < 0 || exchanges.get(last).answer() != null) {
                        exchanges.add(new Exchange("", text));
                    } else {
                        exchanges.set(last, new Exchange(exchanges.get(last).pattern(), text));
                    }
                }
                case "catch" -> {
                    if (rest.size() >= 1 && rest.getFirst().equals("wait")) {
                        finished = runSpawned(call, spawned, exchanges, transcript, finished);
                        int exit = finished == null ? 0 : finished.exitCode();
                        variables.put(rest.size() > 1 ? rest.get(1) : "_", "4242 exp4 0 " + exit);
                    }
                }
                case "exit" -> {
                    int code;
                    try {
                        code = rest.isEmpty() ? 0 : Integer.parseInt(rest.getFirst().strip());
                    } catch (NumberFormatException e) {
                        return MacShell.Result.fail(1, "expected integer but got \"" + rest.getFirst() + "\"\n");
                    }
                    return new MacShell.Result(logUser ? transcript.toString() : "", "", code,
                            finished == null ? null : finished.afterExit());
                }
                default -> {
                    return MacShell.Result.fail(1, "invalid command name \"" + command + "\"\n    while executing\n\"" + line.strip() + "\"\n");
                }
            }
        }
        return new MacShell.Result(logUser ? transcript.toString() : "", "", 0, finished == null ? null : finished.afterExit());
    }

    private static MacShell.Result runSpawned(Call call, List<String> spawned, List<Exchange> exchanges, StringBuilder transcript,
                                              MacShell.Result already) {
        if (already != null || spawned == null || spawned.isEmpty()) {
            return already;
        }
        List<Exchange> pending = new ArrayList<>(exchanges);
        Terminal terminal = (prompt, echo) -> {
            transcript.append(prompt);
            if (pending.isEmpty() || !prompt.contains(pending.getFirst().pattern()) || pending.getFirst().answer() == null) {
                return null;
            }
            String typed = pending.removeFirst().answer().replaceAll("[\r\n]+$", "");
            transcript.append(echo ? typed : "").append("\r\n");
            return typed;
        };
        // The spawned program's standard input is its terminal: nothing more comes from expect's own input.
        MacShell.Result result = new MacShell(call.fleet(), call.mac()).spawn(spawned, () -> null, terminal);
        // A terminal turns each line feed into carriage return + line feed, and merges both output streams.
        transcript.append((result.stdout() + result.stderr()).replace("\n", "\r\n"));
        return result;
    }

    /** Splits one line into Tcl words: "quoted" (backslash escapes, $var), {braced} (literal), bare ($var), [lindex L N]. */
    private static List<String> words(String line, Map<String, String> variables) {
        List<String> words = new ArrayList<>();
        int index = 0;
        while (index < line.length()) {
            char c = line.charAt(index);
            if (Character.isWhitespace(c)) {
                index++;
                continue;
            }
            StringBuilder word = new StringBuilder();
            if (c == '{') {
                int depth = 0;
                int start = index;
                for (; index < line.length(); index++) {
                    char d = line.charAt(index);
                    if (d == '{') {
                        depth++;
                    } else if (d == '}' && --depth == 0) {
                        break;
                    }
                }
                if (index >= line.length()) {
                    throw new ScriptError("missing close-brace");
                }
                words.add(line.substring(start + 1, index));
                index++;
                continue;
            }
            boolean quoted = c == '"';
            if (quoted) {
                index++;
            }
            while (index < line.length()) {
                char d = line.charAt(index);
                if (quoted ? d == '"' : Character.isWhitespace(d)) {
                    break;
                }
                if (d == '\\' && index + 1 < line.length()) {
                    char escaped = line.charAt(index + 1);
                    word.append(switch (escaped) {
                        case 'r' -> '\r';
                        case 'n' -> '\n';
                        case 't' -> '\t';
                        default -> escaped;
                    });
                    index += 2;
                } else if (d == '$') {
                    int end = index + 1;
                    while (end < line.length() && (Character.isLetterOrDigit(line.charAt(end)) || line.charAt(end) == '_')) {
                        end++;
                    }
                    String name = line.substring(index + 1, end);
                    String value = variables.get(name);
                    if (value == null) {
                        throw new ScriptError("can't read \"" + name + "\": no such variable");
                    }
                    word.append(value);
                    index = end;
                } else if (d == '[') {
                    int end = line.indexOf(']', index);
                    if (end < 0) {
                        throw new ScriptError("missing close-bracket");
                    }
                    List<String> inner = words(line.substring(index + 1, end), variables);
                    if (inner.size() != 3 || !inner.getFirst().equals("lindex")) {
                        throw new ScriptError("invalid command name \"" + (inner.isEmpty() ? "" : inner.getFirst()) + "\"");
                    }
                    String[] list = inner.get(1).strip().split("\\s+");
                    int position = Integer.parseInt(inner.get(2));
                    word.append(position < list.length ? list[position] : "");
                    index = end + 1;
                } else {
                    word.append(d);
                    index++;
                }
            }
            if (quoted) {
                if (index >= line.length()) {
                    throw new ScriptError("missing \"");
                }
                index++;
            }
            words.add(word.toString());
        }
        return words;
    }
}
