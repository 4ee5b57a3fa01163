package io.macfleet.simulator;

import java.util.List;
import java.util.function.Supplier;

/**
 * A program a simulated Mac answers over SSH, or a family of them: {@link MacShell} finds it by name (argv[0]
 * without its directory) in the fleet's programs, {@link SimulatedPrograms#standard()} plus any a test adds with
 * {@link SimulatedFleet.Builder#program}. Outputs are macOS's formats, byte for byte where a real sample exists
 * (MacosFormatsTest).
 */
interface SimulatedProgram {

    /** A pseudo-terminal a program prompts on (what {@code expect}'s {@code spawn} gives it). */
    interface Terminal {
        /** Shows the prompt, returns the line typed in answer, or null when nothing is typed. */
        String answer(String prompt, boolean echo);
    }

    /** The names it answers to. */
    List<String> names();

    /** Runs it; the output, the error output and the exit status, and what happens after the exit status was sent. */
    MacShell.Result run(Call call);

    /**
     * One invocation.
     *
     * @param program the name it was called by (without directory)
     * @param words the command line's words, argv[0] as given first (redirections and sudo removed)
     * @param root run with {@code sudo -n}
     * @param stdinLine reads one line of standard input (e.g. {@code --stdinpass})
     * @param pipeInput the output of the command before a {@code |}, or null
     * @param state the machine's state when the command started
     * @param terminal the terminal the program runs on (under {@code expect}), or null: over SSH without a pty
     *                 a program has none, and one that insists on prompting fails as on a real Mac
     */
    record Call(String program, List<String> words, boolean root, Supplier<String> stdinLine, String pipeInput, SimulatedMac mac,
                SimulatedFleet fleet, SimulatedMac.Snapshot state, Terminal terminal) {

        Call(String program, List<String> words, boolean root, Supplier<String> stdinLine, String pipeInput, SimulatedMac mac,
             SimulatedFleet fleet, SimulatedMac.Snapshot state) {
            this(program, words, root, stdinLine, pipeInput, mac, fleet, state, null);
        }

        /**
         * Shows a prompt on the terminal and reads the line typed there. The prompt (and the typed line when
         * {@code echo} is on) go to the transcript the terminal keeps.
         *
         * @return the line, or null when there is no terminal or nobody answered
         */
        String prompt(String prompt, boolean echo) {
            return terminal == null ? null : terminal.answer(prompt, echo);
        }

        /** The arguments after argv[0]. */
        List<String> arguments() {
            return words.subList(1, words.size());
        }
    }
}
