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
 * @param standardInput text written to the command's standard input, then end of file; null for none. This is
 *                      the only way a secret (a volume owner's password) reaches a machine: every local user of
 *                      a Mac sees every process's arguments with {@code ps}, so a secret is never an argument.
 *                      It is never shown: not in the audit log, messages or {@link #toString()}.
 */
public record Command(String program, List<String> arguments, boolean sudo, boolean idempotent, String standardInput) {

    /** How the standard input appears wherever a command is shown (audit log, messages, toString). */
    public static final String STANDARD_INPUT_SHOWN = "<secret on standard input>";

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
        for (String argument : arguments) {
            if (argument.indexOf('\0') >= 0) {
                // A NUL byte cannot be part of a Unix argument; refusing is better than silently cutting it.
                throw new IllegalArgumentException("an argument of " + program + " contains a NUL character");
            }
        }
    }

    public Command(String program, List<String> arguments, boolean sudo, boolean idempotent) {
        this(program, arguments, sudo, idempotent, null);
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
        return new Command(program, arguments, sudo, true, standardInput);
    }

    public Command withSudo() {
        return new Command(program, arguments, true, idempotent, standardInput);
    }

    /**
     * The command line as it may be shown (audit log, messages): {@link #render()}, followed by
     * {@code < <secret on standard input>} when the command has standard input, whose text is never shown.
     */
    public String display() {
        return standardInput == null ? render() : render() + " < " + STANDARD_INPUT_SHOWN;
    }

    /** The command line sent to the machine, every word quoted for a POSIX shell where needed. */
    public String render() {
        StringBuilder line = new StringBuilder();
        if (sudo) {
            // -n: never prompt for a password (fail instead); --: the program name cannot be read as an option.
            line.append("sudo -n -- ");
        }
        line.append(quote(program));
        for (int index = 0; index < arguments.size(); index++) {
            line.append(' ').append(quote(arguments.get(index)));
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
        private String standardInput;

        private Builder(String program) {
            this.program = program;
        }

        public Builder argument(String argument) {
            arguments.add(Objects.requireNonNull(argument, "argument"));
            return this;
        }

        /** Text for the command's standard input (a secret: never shown); see {@link Command#standardInput()}. */
        public Builder standardInput(String text) {
            this.standardInput = Objects.requireNonNull(text, "standard input");
            return this;
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
            return new Command(program, arguments, sudo, idempotent, standardInput);
        }
    }
}
