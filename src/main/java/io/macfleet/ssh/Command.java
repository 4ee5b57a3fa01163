package io.macfleet.ssh;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A command to run on a machine, built from a program and typed arguments. The remote side runs commands
 * through the login shell, so {@link #render()} quotes every argument for a POSIX shell: an argument
 * always arrives as exactly one literal word, whatever it contains. There is deliberately no way to pass a
 * ready-made command line.
 *
 * @param program the program name or absolute path (letters, digits and {@code _ . / + -} only)
 * @param arguments literal arguments
 * @param sudo run with {@code sudo -n}; only programs on the allow-list ({@link PrivilegedProgram}) are sent
 * @param idempotent safe to repeat (reads state, or sets it to a fixed value): retried once when the
 *                   connection drops; a non-idempotent command is never repeated
 */
public record Command(String program, List<String> arguments, boolean sudo, boolean idempotent, java.util.Set<Integer> secretArguments) {

    /** How a secret argument appears wherever a command is shown (audit log, messages, toString). */
    public static final String REDACTED = "'<redacted>'";

    private static final Pattern PROGRAM = Pattern.compile("[A-Za-z0-9_./+-]+");
    /**
     * Characters that no shell macfleet meets (sh, bash, and zsh, the login shell on macOS) treats specially
     * anywhere in a word. Not {@code =}: zsh expands a leading {@code =ls} to {@code /bin/ls}; not {@code ~}, glob or
     * brace characters. Every other word is single-quoted.
     */
    private static final Pattern NEEDS_NO_QUOTES = Pattern.compile("[A-Za-z0-9_@%+:,./-]+");

    public Command {
        Objects.requireNonNull(program, "program");
        if (!PROGRAM.matcher(program).matches()) {
            throw new IllegalArgumentException("not a program name or path: '" + program + "'");
        }
        arguments = List.copyOf(arguments);
        secretArguments = secretArguments == null ? java.util.Set.of() : java.util.Set.copyOf(secretArguments);
        for (int index : secretArguments) {
            if (index < 0 || index >= arguments.size()) {
                throw new IllegalArgumentException("secret argument index " + index + " is outside the " + arguments.size() + " arguments of " + program);
            }
        }
        for (String argument : arguments) {
            if (argument.indexOf('\0') >= 0) {
                // A NUL byte cannot be part of a Unix argument; refusing is better than silently cutting it.
                throw new IllegalArgumentException("an argument of " + program + " contains a NUL character");
            }
        }
    }

    public Command(String program, List<String> arguments, boolean sudo, boolean idempotent) {
        this(program, arguments, sudo, idempotent, java.util.Set.of());
    }

    /** A command that changes state and is never repeated automatically. */
    public static Command of(String program, String... arguments) {
        return new Command(program, List.of(arguments), false, false);
    }

    /** A command that only reads state (facts, checks): retried once when the connection drops. */
    public static Command reading(String program, String... arguments) {
        return new Command(program, List.of(arguments), false, true);
    }

    /** A command run with {@code sudo -n}, for a program on the allow-list. */
    public static Command sudo(PrivilegedProgram program, String... arguments) {
        return new Command(program.path(), List.of(arguments), true, false);
    }

    public static Builder builder(String program) {
        return new Builder(program);
    }

    public Command asIdempotent() {
        return new Command(program, arguments, sudo, true, secretArguments);
    }

    public Command withSudo() {
        return new Command(program, arguments, true, idempotent, secretArguments);
    }

    /** The command line sent to the machine, every word quoted for a POSIX shell where needed. */
    public String render() {
        return render(false);
    }

    /**
     * The command line as it may be shown (audit log, messages): like {@link #render()} with every secret
     * argument (a password passed on the command line) replaced by {@value #REDACTED}.
     */
    public String display() {
        return render(true);
    }

    private String render(boolean redacted) {
        StringBuilder line = new StringBuilder();
        if (sudo) {
            // -n: never prompt for a password (fail instead); --: the program name cannot be read as an option.
            line.append("sudo -n -- ");
        }
        line.append(quote(program));
        for (int index = 0; index < arguments.size(); index++) {
            line.append(' ').append(redacted && secretArguments.contains(index) ? REDACTED : quote(arguments.get(index)));
        }
        return line.toString();
    }

    /** One word for a POSIX shell: as is when it has no special characters, otherwise in single quotes. */
    public static String quote(String word) {
        if (!word.isEmpty() && NEEDS_NO_QUOTES.matcher(word).matches()) {
            return word;
        }
        // Inside single quotes nothing is special except the quote itself: end the quoted part, add an
        // escaped quote, start a new quoted part.
        return "'" + word.replace("'", "'\\''") + "'";
    }

    @Override
    public String toString() {
        return display();
    }

    public static final class Builder {
        private final String program;
        private final List<String> arguments = new ArrayList<>();
        private boolean sudo;
        private boolean idempotent;
        private final java.util.Set<Integer> secretArguments = new java.util.HashSet<>();

        private Builder(String program) {
            this.program = program;
        }

        public Builder argument(String argument) {
            arguments.add(Objects.requireNonNull(argument, "argument"));
            return this;
        }

        /** An argument that is sent but never shown: audit entries and messages say {@value Command#REDACTED}. */
        public Builder secretArgument(String argument) {
            secretArguments.add(arguments.size());
            return argument(argument);
        }

        public Builder arguments(String... more) {
            for (String argument : more) {
                argument(argument);
            }
            return this;
        }

        public Builder sudo() {
            this.sudo = true;
            return this;
        }

        public Builder idempotent() {
            this.idempotent = true;
            return this;
        }

        public Command build() {
            return new Command(program, arguments, sudo, idempotent, secretArguments);
        }
    }
}
