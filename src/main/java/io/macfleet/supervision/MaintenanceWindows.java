package io.macfleet.supervision;

import java.util.Optional;

/**
 * Work that takes a cluster's inference service down on purpose (an OS-update campaign drains it before the
 * update and starts it again after the verification). The supervisor leaves such a cluster alone: restarting its
 * ranks would serve a cluster whose Macs are half updated, which the lockstep rule forbids. Implementations are
 * CDI beans; every one is asked.
 */
public interface MaintenanceWindows {

    /** Why the cluster is down on purpose now (e.g. "campaign 3: OS update to 26.2 (25C56)"), or empty. */
    Optional<String> reason(String cluster);
}
