package io.macfleet.simulator;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The programs that update macOS over SSH, as MacShell runs them: {@code softwareupdate} (minor updates),
 * {@code startosinstall} (a full installer, for major upgrades) and the two a caller uses to check that an account is
 * a volume owner first ({@code diskutil apfs listCryptoUsers /}, {@code dscl . -read /Users/NAME GeneratedUID}).
 * On Apple silicon both installers need a volume owner's name and password, the password on standard input only
 * ({@code --stdinpass}); it is never accepted from the command line.
 *
 * <p>Texts: the license lines and startosinstall's refusal without credentials ("Error: failed to authorize for
 * installation. Provide a password with --stdinpass or --passprompt", kc9wwh/macOSUpgrade #165) are real; the
 * progress lines follow what munki's startosinstall parser reads ("Preparing to …", "Preparing: N", "System going
 * down for install"); the listCryptoUsers tree is the layout of public captures; other refusals are composed.
 */
final class UpdatePrograms implements SimulatedProgram {
    static final String LICENSE = "By using the agreetolicense option, you are agreeing that you have run this tool with the license only option "
            + "and have read and agreed to the terms.\nIf you do not agree, press CTRL-C and cancel this process immediately.\n";
    static final String STARTOSINSTALL_UNAUTHORIZED = "Error: failed to authorize for installation. Provide a password with --stdinpass or --passprompt\n";
    /** The Personal Recovery User's fixed UUID, as every listCryptoUsers capture shows it. */
    private static final String PERSONAL_RECOVERY_USER = "EBC6C064-0000-11AA-AA11-00306543ECAC";

    @Override
    public List<String> names() {
        return List.of("softwareupdate", "startosinstall", "diskutil", "dscl");
    }

    @Override
    public MacShell.Result run(Call call) {
        SimulatedFleet fleet = call.fleet();
        SimulatedMac mac = call.mac();
        List<String> args = call.arguments();
        return switch (call.program()) {
            case "softwareupdate" -> softwareupdate(fleet, mac, args, call.root(), call.stdinLine());
            case "startosinstall" -> startosinstall(fleet, mac, args, call.root(), call.stdinLine());
            case "diskutil" -> diskutil(mac, args);
            case "dscl" -> dscl(fleet, mac, args, call.root());
            default -> throw new IllegalArgumentException("not a program of this family: " + call.program());
        };
    }

    /** softwareupdate --list | --install LABEL|--all|--recommended [--restart] [--agree-to-license] [--user U --stdinpass]. */
    static MacShell.Result softwareupdate(SimulatedFleet fleet, SimulatedMac mac, List<String> args, boolean root, Supplier<String> stdinLine) {
        SimulatedMac.Snapshot state = mac.snapshot();
        Optional<MacosRelease> available = fleet.availableUpdate(state.releaseAfterReboot() != null ? state.releaseAfterReboot() : state.release());
        if (args.contains("--list") || args.contains("-l")) {
            if (available.isEmpty()) {
                return new MacShell.Result("Software Update Tool\n\nFinding available software\n", "No new software available.\n", 0, null);
            }
            MacosRelease next = available.get();
            return MacShell.Result.ok("Software Update Tool\n\nFinding available software\nSoftware Update found the following new or updated software:\n"
                    + "* Label: " + label(next) + "\n"
                    + "\tTitle: macOS Tahoe " + next.version() + ", Version: " + next.version() + ", Size: 7381934KiB, Recommended: YES, Action: restart, \n");
        }
        if (args.contains("--install") || args.contains("-i")) {
            if (!root) {
                return MacShell.Result.fail(1, "softwareupdate: must be run as root to install updates\n");
            }
            String license = args.contains("--agree-to-license") ? LICENSE : "";
            if (available.isEmpty()) {
                return new MacShell.Result(license + "Software Update Tool\n\nFinding available software\n", "No updates are available.\n", 0, null);
            }
            MacosRelease next = available.get();
            boolean named = args.contains("--all") || args.contains("-a") || args.contains(label(next)) || args.contains("--recommended") || args.contains("-r");
            if (!named) {
                return MacShell.Result.fail(1, "Software Update Tool\n\nFinding available software\nNo such update\n");
            }
            String user = valueAfter(args, "--user");
            String password = args.contains("--stdinpass") ? stdinLine.get() : null;
            if (user == null || password == null) {
                return new MacShell.Result(license + "Software Update Tool\n\nFinding available software\n\nDownloading macOS Tahoe " + next.version() + "\n",
                        "Error: On Apple silicon, installing macOS updates requires the credentials of a volume owner (--user and --stdinpass).\n", 1, null);
            }
            String downloaded = license + "Software Update Tool\n\nFinding available software\n\nDownloading macOS Tahoe " + next.version()
                    + "\nDownloaded: macOS Tahoe " + next.version() + "\n";
            if (mac.faults().diskFull()) {
                // Real: exits 0 and installs nothing (a public project's test of its update script, "measured live").
                return MacShell.Result.ok(license + "Software Update Tool\n\nFinding available software\n\nNot enough free disk space: a total of 17.13 GB is required.\n");
            }
            if (!mac.volumeOwnerPasswordMatches(user, password)) {
                // Real text after the download (super's asu-workflow log, Macjutsu/super #219); a wrong password and an
                // account that is not a volume owner look the same.
                return new MacShell.Result(downloaded, "Failed to authenticate\n", 1, null);
            }
            mac.stageRelease(next);
            String out = downloaded + "Installing macOS Tahoe " + next.version() + "\nDone with macOS Tahoe " + next.version() + "\n";
            if (args.contains("--restart") || args.contains("-R")) {
                return new MacShell.Result(out + "Restarting...\n", "", 0, () -> fleet.reboot(mac.name()));
            }
            return MacShell.Result.ok(out + "You have installed one or more updates that requires that you restart your\ncomputer.  Please restart immediately.\n");
        }
        return MacShell.Result.fail(1, "usage: softwareupdate <cmd> [<args> ...]\n");
    }

    /**
     * startosinstall from the full installer of the newest release the fleet offers ("Install macOS Tahoe.app"):
     * --agreetolicense [--forcequitapps] --user U --stdinpass. It prepares, exits 0 and the Mac restarts into the
     * new release.
     */
    static MacShell.Result startosinstall(SimulatedFleet fleet, SimulatedMac mac, List<String> args, boolean root, Supplier<String> stdinLine) {
        List<String> known = List.of("--agreetolicense", "--forcequitapps", "--nointeraction", "--rebootdelay", "--user", "--stdinpass", "--passprompt", "--usage");
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.startsWith("--") && !known.contains(arg)) {
                return MacShell.Result.fail(1, "Error: unrecognized option " + arg + "\nUsage: startosinstall --agreetolicense [--forcequitapps] [--user USER --stdinpass]\n");
            }
            if (arg.equals("--user") || arg.equals("--rebootdelay")) {
                i++;
            }
        }
        if (args.contains("--usage")) {
            return MacShell.Result.ok("Usage: startosinstall --agreetolicense [--forcequitapps] [--user USER --stdinpass | --passprompt]\n");
        }
        if (!root) {
            return MacShell.Result.fail(1, "Error: startosinstall must be run as root.\n");
        }
        if (!args.contains("--agreetolicense")) {
            return MacShell.Result.fail(1, "Error: the license must be agreed to with --agreetolicense when not running interactively.\n");
        }
        SimulatedMac.Snapshot state = mac.snapshot();
        MacosRelease current = state.releaseAfterReboot() != null ? state.releaseAfterReboot() : state.release();
        MacosRelease installer = current;
        for (Optional<MacosRelease> next = fleet.availableUpdate(installer); next.isPresent(); next = fleet.availableUpdate(installer)) {
            installer = next.get();
        }
        if (installer.compareVersion(current) <= 0) {
            return new MacShell.Result(LICENSE, "Error: this installer (macOS " + installer.version() + ") cannot install over macOS " + current.version() + ".\n", 1, null);
        }
        String user = valueAfter(args, "--user");
        // --passprompt needs a terminal; over a non-interactive SSH command it reads nothing.
        String password = args.contains("--stdinpass") ? stdinLine.get() : null;
        if (user == null || password == null || !mac.volumeOwnerPasswordMatches(user, password)) {
            return new MacShell.Result(LICENSE, STARTOSINSTALL_UNAUTHORIZED, 255, null);
        }
        if (mac.faults().diskFull()) {
            // Composed: no capture of startosinstall's own refusal was found.
            return new MacShell.Result(LICENSE, "Error: Not enough free disk space to install macOS " + installer.version() + ".\n", 1, null);
        }
        mac.stageRelease(installer);
        StringBuilder out = new StringBuilder(LICENSE).append("Preparing to run macOS Installer...\n");
        for (int percent = 0; percent <= 100; percent += 25) {
            out.append("Preparing: ").append(percent).append(".0\n");
        }
        out.append("System going down for install\n");
        return new MacShell.Result(out.toString(), "", 0, () -> fleet.reboot(mac.name()));
    }

    /** diskutil apfs listCryptoUsers / (or listUsers): the volume owner, the recovery key, the bootstrap token once escrowed. */
    static MacShell.Result diskutil(SimulatedMac mac, List<String> args) {
        if (args.size() == 3 && args.get(0).equals("apfs") && (args.get(1).equalsIgnoreCase("listCryptoUsers") || args.get(1).equalsIgnoreCase("listUsers"))
                && args.get(2).equals("/")) {
            boolean token = mac.snapshot().bootstrapTokenEscrowed();
            StringBuilder out = new StringBuilder("Cryptographic users for disk3s1s1 (" + (token ? 3 : 2) + " found)\n|\n");
            out.append("+-- ").append(generatedUid(mac, mac.volumeOwnerUser())).append("\n|   Type: Local Open Directory User\n|   Volume Owner: Yes\n|\n");
            String last = token ? "|   " : "    ";
            out.append("+-- ").append(PERSONAL_RECOVERY_USER).append("\n").append(last).append("Type: Personal Recovery User\n")
                    .append(last).append("Volume Owner: Yes\n");
            if (token) {
                out.append("|\n+-- ").append(uuid(mac.spec().hardwareUuid() + "/bootstrap-token")).append("\n    Type: MDM Bootstrap Token External Key\n")
                        .append("    Volume Owner: Yes\n");
            }
            return MacShell.Result.ok(out.toString());
        }
        return MacShell.Result.fail(1, "diskutil: the simulator answers apfs listCryptoUsers /\n");
    }

    /**
     * dscl . -read /Users/NAME GeneratedUID: the account's UUID (the admin account and the volume owner share the
     * simulator's one user); dscl . -read|-list|-create on /Users and /Groups of the local directory (creating needs root).
     */
    static MacShell.Result dscl(SimulatedFleet fleet, SimulatedMac mac, List<String> args, boolean root) {
        if (args.size() == 4 && args.get(0).equals(".") && args.get(1).equals("-read") && args.get(2).startsWith("/Users/") && args.get(3).equals("GeneratedUID")) {
            String user = args.get(2).substring("/Users/".length());
            if (!mac.accountExists(user) && !user.equals(fleet.sshUser())) {
                return MacShell.Result.fail(56, NOT_FOUND);
            }
            return MacShell.Result.ok("GeneratedUID: " + generatedUid(mac, user) + "\n");
        }
        if (args.size() >= 3 && args.get(0).equals(".")) {
            LocalDirectory directory = mac.localDirectory();
            String path = args.get(2);
            String kind = path.startsWith("/Users") ? "/Users" : path.startsWith("/Groups") ? "/Groups" : null;
            if (kind == null) {
                return MacShell.Result.fail(56, NOT_FOUND);
            }
            String name = path.length() > kind.length() + 1 ? path.substring(kind.length() + 1) : "";
            switch (args.get(1)) {
                case "-list" -> {
                    StringBuilder out = new StringBuilder();
                    String key = args.size() > 3 ? args.get(3) : null;
                    new java.util.TreeMap<>(directory.records(kind)).forEach((record, attributes) -> {
                        if (key == null) {
                            out.append(record).append('\n');
                        } else if (attributes.containsKey(key)) {
                            out.append(String.format("%-24s", record)).append(String.join(" ", attributes.get(key))).append('\n');
                        }
                    });
                    return MacShell.Result.ok(out.toString());
                }
                case "-read" -> {
                    java.util.Map<String, List<String>> record = directory.records(kind).get(name);
                    if (record == null) {
                        return MacShell.Result.fail(56, NOT_FOUND);
                    }
                    StringBuilder out = new StringBuilder();
                    List<String> keys = args.size() > 3 ? args.subList(3, args.size()) : List.copyOf(record.keySet());
                    for (String key : keys) {
                        if (!record.containsKey(key)) {
                            return new MacShell.Result(out.toString(), "No such key: " + key + "\n", 181, null);
                        }
                        out.append(key).append(": ").append(String.join(" ", record.get(key))).append('\n');
                    }
                    return MacShell.Result.ok(out.toString());
                }
                case "-create" -> {
                    if (!root) {
                        return MacShell.Result.fail(40, "<main> attribute status: eDSPermissionError\n<dscl_cmd> DS Error: -14120 (eDSPermissionError)\n");
                    }
                    if (name.isEmpty() || name.contains("/")) {
                        return MacShell.Result.fail(56, NOT_FOUND);
                    }
                    directory.create(kind, name, args.size() > 3 ? java.util.Optional.of(args.get(3)) : java.util.Optional.empty(),
                            args.size() > 4 ? args.subList(4, args.size()) : List.of());
                    return MacShell.Result.ok("");
                }
                default -> {
                }
            }
        }
        return MacShell.Result.fail(64, "dscl: the simulator answers dscl . -read, -list and -create on /Users and /Groups\n");
    }

    private static final String NOT_FOUND = "<dscl_cmd> DS Error: -14136 (eDSRecordNotFound)\n";

    private static String generatedUid(SimulatedMac mac, String user) {
        return uuid(mac.spec().hardwareUuid() + "/user/" + user);
    }

    private static String uuid(String seed) {
        return UUID.nameUUIDFromBytes(seed.getBytes(StandardCharsets.UTF_8)).toString().toUpperCase(java.util.Locale.ROOT);
    }

    static String label(MacosRelease release) {
        return "macOS Tahoe " + release.version() + "-" + release.build();
    }

    private static String valueAfter(List<String> args, String flag) {
        int index = args.indexOf(flag);
        return index >= 0 && index + 1 < args.size() ? args.get(index + 1) : null;
    }
}
