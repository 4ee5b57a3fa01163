package io.macfleet.provision;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.PrivilegedProgram;
import java.util.List;

/**
 * A command of a playbook: an argument vector, never a shell string. {@code privileged} runs it with
 * {@code sudo -n}, which only the programs of the sudo allow-list ({@link PrivilegedProgram}, by absolute path)
 * may. Arguments may hold placeholders ({@link Templates}); a {@code {{ secret ... }}} one is sent but never shown.
 */
public record CommandSpec(List<String> argv, boolean privileged, @JsonProperty("timeoutSeconds") Integer timeoutSeconds) {

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

    /** The command for one machine, placeholders filled; secrets marked so they are never shown. */
    Command build(Templates.Variables variables, boolean reading) {
        Command.Builder builder = Command.builder(argv.getFirst());
        for (String word : argv.subList(1, argv.size())) {
            Templates.Rendered rendered = Templates.render(word, variables);
            if (rendered.secret()) {
                builder.secretArgument(rendered.text());
            } else {
                builder.argument(rendered.text());
            }
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
