package io.macfleet.lease;

import java.net.InetAddress;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The owners of the row leases that provisioning runs and OS update campaigns take in the database: who holds one
 * ({@code PID@HOST/RANDOM}, one per piece of work), and whether that holder is a process of this host that is gone, so
 * that its work can be taken over at once instead of after the lease's timeout.
 */
public final class LeaseOwners {

    private static final Pattern OWNER = Pattern.compile("(\\d+)@(.+)/[0-9a-f]+");
    private static final String THIS_PROCESS = ProcessHandle.current().pid() + "@" + hostName();

    private LeaseOwners() {
    }

    /** A new owner name for one piece of work of this process. */
    public static String next() {
        return THIS_PROCESS + "/" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Whether the owner is a process of this host that no longer exists. An owner of another host, or a name of
     * another form, is never known to be dead here: only its lease's timeout frees its work.
     */
    public static boolean isDeadProcessOfThisHost(String owner) {
        if (owner == null) {
            return false;
        }
        Matcher matcher = OWNER.matcher(owner);
        if (!matcher.matches() || !matcher.group(2).equals(hostName())) {
            return false;
        }
        return !ProcessHandle.of(Long.parseLong(matcher.group(1))).map(ProcessHandle::isAlive).orElse(false);
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "localhost";
        }
    }
}
