package io.macfleet.mdm;

import java.util.List;

/**
 * What an OS-update campaign asks of any MDM: put a group of enrollments (one cluster) on one exact target, and read
 * each device's progress. NanoHUB implements it through declarations ({@link DeclarativeOsUpdates}); a Fleet adapter
 * would set the team's {@code mdm.macos_updates}, a Jamf Pro adapter would create a managed software update plan
 * (docs/os-updates.md, "Other MDM servers").
 */
public interface OsUpdateEnforcement {

    /**
     * Makes the server enforce {@code target} on exactly these enrollments, with automatic updates off so no node
     * moves on its own. Calling it again with the same arguments changes nothing and reaches no device twice.
     *
     * @param group a stable name for the group (the cluster), used to name server-side objects
     */
    List<Change> enforce(String group, OsUpdateTarget target, List<String> enrollmentIds);

    /** Each device's update state, in the order asked. */
    List<SoftwareUpdateStatus> status(List<String> enrollmentIds);
}
