package io.macfleet.deployment;

import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.MachineSession;
import io.macfleet.ssh.PrivilegedProgram;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The account the inference node's daemon runs as on a Mac (launchd's {@code UserName}), not root: a hidden role
 * account in the macOS way (name with a leading underscore, an id below 500 so the login window never lists it,
 * no shell, no home, no password), with a group of the same name and id. The deploy creates it with {@code dscl}
 * when the Mac does not have it; the node's keys belong to it (mode 600), its files to root.
 */
public final class DaemonAccount {
    public static final String NAME = "_macfleet";
    /** Ids tried, from the top down: macOS's own role accounts take the low ones (_www 70, _spotlight 89, ... up to about 280). */
    static final int HIGHEST_ID = 499;
    static final int LOWEST_ID = 300;

    private DaemonAccount() {
    }

    /** Whether the Mac has the account (dscl reads its UniqueID). */
    static boolean exists(MachineSession machine) {
        return machine.execute(Command.reading("dscl", ".", "-read", "/Users/" + NAME, "UniqueID")).succeeded();
    }

    /** Creates the group and the account unless the Mac has the account; returns whether it was created. */
    public static boolean ensure(MachineSession machine) {
        if (exists(machine)) {
            return false;
        }
        Set<Integer> taken = new HashSet<>();
        taken.addAll(ids(machine, "/Users", "UniqueID"));
        taken.addAll(ids(machine, "/Groups", "PrimaryGroupID"));
        int id = HIGHEST_ID;
        while (id >= LOWEST_ID && taken.contains(id)) {
            id--;
        }
        if (id < LOWEST_ID) {
            throw new IllegalStateException("no free user and group id between " + LOWEST_ID + " and " + HIGHEST_ID + " for the account " + NAME);
        }
        String number = Integer.toString(id);
        String group = "/Groups/" + NAME;
        String user = "/Users/" + NAME;
        for (List<String> attribute : List.of(
                List.of(group, "PrimaryGroupID", number),
                List.of(group, "RealName", "macfleet inference node"),
                List.of(group, "Password", "*"),
                List.of(user, "UniqueID", number),
                List.of(user, "PrimaryGroupID", number),
                List.of(user, "UserShell", "/usr/bin/false"),
                List.of(user, "NFSHomeDirectory", "/var/empty"),
                List.of(user, "RealName", "macfleet inference node"),
                List.of(user, "Password", "*"),
                List.of(user, "IsHidden", "1"))) {
            NodeDeployer.require(machine.execute(Command.sudo(PrivilegedProgram.DSCL, ".", "-create", attribute.get(0), attribute.get(1), attribute.get(2))),
                    "cannot create the daemon account " + NAME);
        }
        if (!exists(machine)) {
            throw new IllegalStateException("created the daemon account " + NAME + " with dscl, but `dscl . -read /Users/" + NAME + "` does not find it");
        }
        return true;
    }

    /** The numeric ids in {@code dscl . -list PATH KEY} ("name   id" lines). */
    private static Set<Integer> ids(MachineSession machine, String path, String key) {
        CommandResult listed = NodeDeployer.require(machine.execute(Command.reading("dscl", ".", "-list", path, key)),
                "cannot list the Mac's " + path.substring(1).toLowerCase(java.util.Locale.ROOT));
        Set<Integer> ids = new HashSet<>();
        for (String line : listed.stdout().split("\n")) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length >= 2) {
                for (int index = 1; index < fields.length; index++) {
                    try {
                        ids.add(Integer.parseInt(fields[index]));
                    } catch (NumberFormatException notAnId) {
                        // Other values are not ids.
                    }
                }
            }
        }
        return ids;
    }
}
