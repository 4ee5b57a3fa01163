package io.macfleet.osupdate;

import io.macfleet.supervision.MaintenanceWindows;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Optional;

/** A cluster drained by an OS-update campaign is down for maintenance until the campaign undrains it. */
@ApplicationScoped
class CampaignMaintenanceWindows implements MaintenanceWindows {

    private final OsUpdateCampaigns campaigns;

    @Inject
    CampaignMaintenanceWindows(OsUpdateCampaigns campaigns) {
        this.campaigns = campaigns;
    }

    @Override
    public Optional<String> reason(String cluster) {
        return Optional.ofNullable(campaigns.maintenance().get(cluster));
    }
}
