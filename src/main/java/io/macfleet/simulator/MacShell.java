package io.macfleet.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Answers the commands a simulated Mac receives over SSH, in macOS's formats. It is zsh as far as macfleet can
 * tell: simple commands joined by {@code ;}, {@code &&} and {@code ||}; no pipes, expansion or redirection
 * other than discarding to /dev/null. The programs themselves are {@link SimulatedProgram}s, found by name in the
 * fleet's list ({@link SimulatedPrograms#standard()}).
 */
final class MacShell {
    /** Outcome of a command line. {@code afterExit} runs once the exit status has been sent (e.g. a reboot). */
    record Result(String stdout, String stderr, int exitCode, Runnable afterExit) {
        static Result ok(String stdout) {
            return new Result(stdout, "", 0, null);
        }

        static Result fail(int code, String stderr) {
            return new Result("", stderr, code, null);
        }
    }

    private final SimulatedFleet fleet;
    private final SimulatedMac mac;

    MacShell(SimulatedFleet fleet, SimulatedMac mac) {
        this.fleet = fleet;
        this.mac = mac;
    }

    Result run(String commandLine, Supplier<String> stdinLine) {
        List<ShellWords.Command> commands;
        try {
            commands = ShellWords.parse(commandLine);
        } catch (IllegalArgumentException e) {
            return Result.fail(1, e.getMessage() + "\n");
        }
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        int exit = 0;
        Runnable after = null;
        String previousOperator = "";
        String pipeInput = null;
        for (ShellWords.Command command : commands) {
            boolean piped = previousOperator.equals("|");
            boolean skip = !piped && ((previousOperator.equals("&&") && exit != 0) || (previousOperator.equals("||") && exit == 0));
            previousOperator = command.operatorAfter();
            if (skip || command.words().isEmpty()) {
                pipeInput = "";
                continue;
            }
            Result result = runSimple(new ArrayList<>(command.words()), stdinLine, piped ? pipeInput : null);
            if (command.operatorAfter().equals("|")) {
                pipeInput = result.stdout();
            } else {
                out.append(result.stdout());
            }
            err.append(result.stderr());
            exit = result.exitCode();
            if (result.afterExit() != null) {
                after = result.afterExit();
            }
        }
        return new Result(out.toString(), err.toString(), exit, after);
    }

    /** Runs one program on a terminal (what {@code expect}'s {@code spawn} does): sudo allowed, no shell syntax. */
    Result spawn(List<String> words, Supplier<String> stdinLine, SimulatedProgram.Terminal terminal) {
        return runSimple(new ArrayList<>(words), stdinLine, null, terminal);
    }

    private Result runSimple(List<String> words, Supplier<String> stdinLine, String pipeInput) {
        return runSimple(words, stdinLine, pipeInput, null);
    }

    private Result runSimple(List<String> words, Supplier<String> stdinLine, String pipeInput, SimulatedProgram.Terminal terminal) {
        boolean discardOut = words.remove(">/dev/null") | words.remove("1>/dev/null");
        boolean discardErr = words.remove("2>/dev/null");
        boolean mergeErr = words.remove("2>&1");
        if (words.isEmpty()) {
            return Result.ok("");
        }
        boolean root = false;
        if (words.getFirst().equals("sudo") || words.getFirst().equals("/usr/bin/sudo")) {
            mac.recordProcess(String.join(" ", words));
            words.removeFirst();
            if (words.isEmpty() || !words.getFirst().equals("-n")) {
                return Result.fail(1, "sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\nsudo: a password is required\n");
            }
            words.removeFirst();
            if (!words.isEmpty() && words.getFirst().equals("--")) {
                // sudo's end of options: what macfleet's Command sends (`sudo -n -- PROGRAM ...`).
                words.removeFirst();
            }
            root = true;
            if (words.isEmpty()) {
                return Result.fail(1, "usage: sudo -h | -K | -k | -V\n");
            }
        }
        Result result;
        try {
            result = dispatch(words, root, stdinLine, pipeInput, terminal);
        } catch (RuntimeException e) {
            result = Result.fail(1, words.getFirst() + ": " + e.getMessage() + "\n");
        }
        String stdout = discardOut ? "" : result.stdout();
        String stderr = discardErr ? "" : result.stderr();
        if (mergeErr) {
            stdout = stdout + stderr;
            stderr = "";
        }
        return new Result(stdout, stderr, result.exitCode(), result.afterExit());
    }

    private Result dispatch(List<String> words, boolean root, Supplier<String> stdinLine, String pipeInput, SimulatedProgram.Terminal terminal) {
        String program = words.getFirst();
        if (program.contains("/")) {
            program = program.substring(program.lastIndexOf('/') + 1);
        }
        SimulatedProgram simulated = fleet.program(program);
        if (simulated == null) {
            Optional<Result> uploaded = UploadedProgram.run(mac, words);
            if (uploaded.isPresent()) {
                mac.recordProcess(String.join(" ", words));
                return uploaded.get();
            }
            return Result.fail(127, "zsh: command not found: " + words.getFirst() + "\n");
        }
        mac.recordProcess(String.join(" ", words));
        return simulated.run(new SimulatedProgram.Call(program, words, root, stdinLine, pipeInput, mac, fleet, mac.snapshot(), terminal));
    }

    /** What a person can type in Recovery's Terminal. */
    Result recovery(String commandLine) {
        List<String> words;
        try {
            words = ShellWords.parse(commandLine).getFirst().words();
        } catch (IllegalArgumentException e) {
            return Result.fail(1, e.getMessage() + "\n");
        }
        if (words.isEmpty()) {
            return Result.ok("");
        }
        String program = words.getFirst();
        List<String> args = words.subList(1, words.size());
        SimulatedMac.Snapshot state = mac.snapshot();
        return switch (program) {
            case "rdma_ctl" -> {
                String verb = args.isEmpty() ? "" : args.getFirst();
                yield switch (verb) {
                    case "status" -> Result.ok((state.rdmaAfterReboot() != null ? state.rdmaAfterReboot() : state.rdmaEnabled()) ? "enabled\n" : "disabled\n");
                    case "enable" -> {
                        if (!state.spec().thunderbolt5()) {
                            yield Result.fail(1, "rdma_ctl: RDMA over Thunderbolt requires Thunderbolt 5 hardware.\n");
                        }
                        mac.stageRdma(true);
                        yield Result.ok("");
                    }
                    case "disable" -> {
                        mac.stageRdma(false);
                        yield Result.ok("");
                    }
                    default -> Result.fail(64, "usage: rdma_ctl status|enable|disable\n");
                };
            }
            case "csrutil" -> Result.ok("System Integrity Protection status: enabled.\n");
            case "reboot" -> new Result("", "", 0, () -> fleet.reboot(mac.name()));
            case "shutdown" -> new Result("", "", 0, () -> fleet.powerOff(mac.name()));
            case "sw_vers" -> Result.ok(MacosOutput.swVers(state.release()));
            default -> Result.fail(127, "-bash: " + program + ": command not found\n");
        };
    }

    static String garbage(String output) {
        StringBuilder noise = new StringBuilder();
        java.util.Random random = new java.util.Random(output.hashCode());
        int length = Math.max(16, output.length());
        for (int i = 0; i < length; i++) {
            noise.append((char) (0x21 + random.nextInt(0x5d)));
            if (random.nextInt(40) == 0) {
                noise.append('\n');
            }
        }
        return noise.append('\n').toString().toLowerCase(Locale.ROOT);
    }
}
