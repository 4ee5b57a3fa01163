package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.util.List;

/** launchctl: bootstrap, bootout, kickstart, enable, disable, print and list on the machine's simulated launchd. */
final class LaunchctlProgram implements SimulatedProgram {

    private static final String OPENSSH_LABEL = "com.openssh.sshd";

    @Override
    public List<String> names() {
        return List.of("launchctl");
    }

    @Override
    public Result run(Call call) {
        return launchctl(call.mac(), call.arguments(), call.root());
    }

    private static Result launchctl(SimulatedMac mac, List<String> args, boolean root) {
        if (args.isEmpty()) {
            return Result.fail(64, "Usage: launchctl <subcommand> ... | help [subcommand]\n");
        }
        String verb = args.getFirst();
        Launchd launchd = mac.launchd();
        boolean needsRoot = !verb.equals("print") && !verb.equals("list");
        if (needsRoot && !root) {
            String prefix = switch (verb) {
                case "bootstrap" -> "Bootstrap failed: 1: Operation not permitted\n";
                case "bootout" -> "Boot-out failed: 1: Operation not permitted\n";
                default -> "Not privileged to " + verb + " service.\n";
            };
            return Result.fail(1, prefix);
        }
        Launchd.Outcome outcome;
        switch (verb) {
            case "bootstrap" -> {
                if (args.size() != 3 || !args.get(1).equals("system")) {
                    return Result.fail(64, "Usage: launchctl bootstrap system <plist path>\n");
                }
                outcome = launchd.bootstrap(args.get(2));
            }
            case "bootout" -> {
                String label;
                if (args.size() == 2 && args.get(1).startsWith("system/")) {
                    label = args.get(1).substring("system/".length());
                } else if (args.size() == 3 && args.get(1).equals("system")) {
                    label = launchd.labelOf(args.get(2)).orElse(args.get(2));
                } else {
                    return Result.fail(64, "Usage: launchctl bootout system/<label> | system <plist path>\n");
                }
                outcome = launchd.bootout(label);
            }
            case "kickstart" -> {
                boolean kill = args.contains("-k");
                String target = args.getLast();
                if (!target.startsWith("system/")) {
                    return Result.fail(64, "Usage: launchctl kickstart [-k] system/<label>\n");
                }
                if (target.equals("system/" + OPENSSH_LABEL)) {
                    // macOS's sshd is launched per connection (inetdCompatibility), so new connections already read
                    // the new configuration; restarting the listener succeeds and changes nothing else.
                    return Result.ok("");
                }
                outcome = launchd.kickstart(target.substring("system/".length()), kill);
            }
            case "enable", "disable" -> {
                if (args.size() != 2 || !args.get(1).startsWith("system/")) {
                    return Result.fail(64, "Usage: launchctl " + verb + " system/<label>\n");
                }
                String label = args.get(1).substring("system/".length());
                outcome = verb.equals("enable") ? launchd.enable(label) : launchd.disable(label);
            }
            case "print" -> {
                if (args.size() != 2 || !args.get(1).startsWith("system/")) {
                    return Result.fail(64, "Usage: launchctl print system/<label>\n");
                }
                String label = args.get(1).substring("system/".length());
                return launchd.print(label).map(Result::ok)
                        .orElse(Result.fail(113, "Could not find service \"" + label + "\" in domain for system\n"));
            }
            case "list" -> {
                StringBuilder out = new StringBuilder("PID\tStatus\tLabel\n");
                for (String label : launchd.labels()) {
                    out.append(launchd.pid(label).map(String::valueOf).orElse("-")).append("\t0\t").append(label).append('\n');
                }
                return Result.ok(out.toString());
            }
            default -> {
                return Result.fail(64, "Unrecognized subcommand: " + verb + "\n");
            }
        }
        return new Result("", outcome.stderr(), outcome.exitCode(), null);
    }
}
