package io.macfleet.provision;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.PrivilegedProgram;
import java.util.List;

/**
 * A command of a playbook: an argument vector, never a shell string. {@code privileged} runs it with
 * {@code sudo -n}, which only the programs of the sudo allow-list ({@link PrivilegedProgram}, by absolute path)
 * may. Arguments may hold placeholders ({@link Templates}), but never a secret: every local user of a Mac sees every
 * process's arguments with {@code ps}. A secret ({@code {{ secret machine.volumeOwner.password }}}) goes in
 * {@code stdin}, lines written to the command's standard input and never shown.
 */
public record CommandSpec(List<String> argv, boolean privileged, @JsonProperty("timeoutSeconds") Integer timeoutSeconds,
                          List<String> stdin) {

    static final String SECRET_IN_ARGV = "a secret cannot be a command-line argument (every local user of the Mac sees"
            + " arguments with ps); send it on standard input: stdin: [\"{{ secret ... }}\"]";

    public CommandSpec(List<String> argv, boolean privileged, Integer timeoutSeconds) {
        this(argv, privileged, timeoutSeconds, null);
    }

    public CommandSpec {
        if (argv == null || argv.isEmpty()) {
            throw new IllegalArgumentException("'argv' is required: the program and its arguments as a list");
        }
        argv = List.copyOf(argv);
        for (String word : argv) {
            if (word == null) {
                throw new IllegalArgumentException("argv has an empty (null) word");
            }
            Templates.validate(word);
            if (Templates.hasSecret(word)) {
                throw new IllegalArgumentException(SECRET_IN_ARGV + "; found in argv word '" + word + "'");
            }
        }
        stdin = stdin == null ? List.of() : List.copyOf(stdin);
        for (String line : stdin) {
            if (line == null || line.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("each stdin entry is one line of text (no line breaks, not empty)");
            }
            Templates.validate(line);
        }
        if (Templates.hasPlaceholder(argv.getFirst())) {
            throw new IllegalArgumentException("the program (argv[0]) cannot be a placeholder");
        }
        if (privileged && PrivilegedProgram.forPath(argv.getFirst()).isEmpty()) {
            throw new IllegalArgumentException("privileged program " + argv.getFirst() + " is not on the sudo allow-list; expected one of "
                    + PrivilegedProgram.paths().stream().sorted().toList());
        }
        if (timeoutSeconds != null && (timeoutSeconds < 1 || timeoutSeconds > 3600)) {
            throw new IllegalArgumentException("timeoutSeconds must be 1..3600, was " + timeoutSeconds);
        }
    }

    /** The command for one machine, placeholders filled; the standard input (which may hold secrets) is never shown. */
    Command build(Templates.Variables variables, boolean reading) {
        Command.Builder builder = Command.builder(argv.getFirst());
        for (String word : argv.subList(1, argv.size())) {
            builder.argument(Templates.render(word, variables).text());
        }
        if (!stdin.isEmpty()) {
            StringBuilder input = new StringBuilder();
            for (String line : stdin) {
                String text = Templates.render(line, variables).text();
                if (text.indexOf('\n') >= 0 || text.indexOf('\r') >= 0) {
                    // A line break inside a value would shift every later line (the password would be read as something else).
                    throw new StepFailedException("a stdin line of " + argv.getFirst() + " has a line break in its value; a secret used on standard input must be one line");
                }
                input.append(text).append('\n');
            }
            builder.standardInput(input.toString());
        }
        if (privileged) {
            builder.sudo();
        }
        if (reading) {
            builder.idempotent();
        }
        return builder.build();
    }

    String display() {
        return String.join(" ", argv);
    }
}
