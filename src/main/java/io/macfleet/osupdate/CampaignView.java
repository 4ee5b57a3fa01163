package io.macfleet.osupdate;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A campaign as stored: what the CLI's {@code status}, the API and the console show.
 *
 * @param status running, paused, succeeded or failed
 * @param installBy Apple's TargetLocalDateTime the declarations carry
 */
public record CampaignView(long id, String status, String targetVersion, Optional<String> targetBuild, String installBy, String method,
                           String serviceLabel, int clustersAtOnce, boolean continueOnFailure, String createdBy, Instant createdAt,
                           Instant updatedAt, List<ClusterView> clusters) {

    public CampaignView {
        clusters = List.copyOf(clusters);
    }

    public String target() {
        return targetVersion + targetBuild.map(build -> " (" + build + ")").orElse("");
    }

    /** The status as its type ({@code status} is its wire form, for JSON and the CLI). */
    public CampaignStatus state() {
        return CampaignStatus.of(status);
    }

    public boolean finished() {
        return state() == CampaignStatus.SUCCEEDED || state() == CampaignStatus.FAILED;
    }

    /**
     * One cluster of a campaign.
     *
     * @param step pending, preflight, draining, updating, verifying, undraining, done, failed
     * @param failedStep where a failed cluster stopped (empty otherwise)
     * @param failure what failed, in one text (each machine's own reason is on the machine)
     */
    public record ClusterView(String cluster, int position, String step, Optional<String> failedStep, Optional<String> failure,
                              Instant updatedAt, List<MachineView> machines) {
        public ClusterView {
            machines = List.copyOf(machines);
        }
    }

    /**
     * One machine of a campaign.
     *
     * @param phase pending, checked, blocked (preflight found a problem), waiting, downloading, prepared, installing,
     *              restarting, done, failed, unknown
     * @param detail what was last seen, or what failed
     * @param fix what a person must do, when something failed
     */
    public record MachineView(String machine, String cluster, String phase, String startState, Optional<String> osVersion,
                              Optional<String> buildVersion, Optional<String> detail, Optional<String> fix, Instant phaseSince) {
    }
}
