package io.macfleet.osupdate;

import io.macfleet.audit.AuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.SshSettings;
import java.time.Clock;
import java.time.Duration;

/**
 * What the parts of the engine (planner, wave executor, cluster steps, update watch) share: the stores, the state
 * machine every transition goes through, the clock and how to wait.
 */
record CampaignContext(CampaignStore store, CampaignStateMachine states, AuditLog audit, HostKeyStore hostKeys, DesiredStateStore desiredState,
                       FactsService facts, ClusterCabling cabling, OsUpdateCampaigns.Options options, Clock clock, StepBoundary boundary,
                       PollPause pause, Reachability reachability) {

    /** Whether a Mac answers over SSH now (a Mac past its deadline that does not is probably off or asleep). */
    @FunctionalInterface
    interface Reachability {
        boolean reachable(Machine machine, String actor);
    }

    static CampaignContext of(CampaignStore store, AuditLog audit, HostKeyStore hostKeys, DesiredStateStore desiredState, FactsService facts,
                              ClusterCabling cabling, OsUpdateCampaigns.Options options, Clock clock, StepBoundary boundary, PollPause pause) {
        CampaignStateMachine states = new CampaignStateMachine(store, audit, clock);
        Reachability[] overSsh = new Reachability[1];
        CampaignContext context = new CampaignContext(store, states, audit, hostKeys, desiredState, facts, cabling, options, clock, boundary, pause,
                (machine, actor) -> overSsh[0].reachable(machine, actor));
        overSsh[0] = (machine, actor) -> {
            try (NodeShell shell = context.shell(actor)) {
                return shell.reachable(machine);
            }
        };
        return context;
    }

    boolean paused(long id) {
        return store.campaign(id).map(campaign -> campaign.status() == CampaignStatus.PAUSED).orElse(false);
    }

    NodeShell shell(String actor) {
        SshSettings base = options.ssh();
        SshSettings settings = new SshSettings(base.acceptNewHostKeys(), base.limits(), base.parallelism(), actor, base.sudoAllowList(), base.environment());
        return new NodeShell(settings, hostKeys, audit, clock);
    }

    static String describe(OsUpdateTarget target) {
        return target.osVersion() + target.buildVersion().map(build -> " (" + build + ")").orElse("");
    }

    static String human(Duration duration) {
        if (duration.toMillis() < 10_000) {
            return duration.toMillis() + " ms";
        }
        return duration.toMinutes() >= 1 ? duration.toMinutes() + " min" : duration.toSeconds() + " s";
    }
}
