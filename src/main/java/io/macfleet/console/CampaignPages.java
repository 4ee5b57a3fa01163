package io.macfleet.console;

import io.macfleet.fleet.MachineRow;
import io.macfleet.osupdate.CampaignView;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
import java.util.List;

/** The OS-update campaign pages' records and templates (templates/console/osUpdate*.html). */
final class CampaignPages {
    private CampaignPages() {
    }

    @CheckedTemplate(basePath = "console")
    static final class Templates {
        private Templates() {
        }

        static native TemplateInstance osUpdates(Campaigns page);

        static native TemplateInstance osUpdate(Campaign page);

        /** A campaign's live part, fetched by htmx every few seconds while the campaign can still change. */
        static native TemplateInstance osUpdateProgress(Progress progress);
    }

    public record Summary(long id, String status, String css, String target, String method, String clusters, String createdBy) {
    }

    public record Campaigns(Pages.Layout layout, List<Summary> campaigns, List<String> clusters, List<String> maintenance) {
    }

    public record MachineRow(String machine, String phase, String css, String version, String detail, String fix) {
    }

    public record ClusterRow(String cluster, String step, String css, String failure, List<MachineRow> machines) {
    }

    public record Progress(Summary campaign, String installBy, boolean live, String refreshUrl, Viewer viewer, List<ClusterRow> clusters) {
    }

    public record Campaign(Pages.Layout layout, Progress progress) {
    }

    static Summary summary(CampaignView view) {
        return new Summary(view.id(), view.status(), css(view.status()), view.target(), view.method(),
                String.join(", ", view.clusters().stream().map(cluster -> cluster.cluster() + " (" + cluster.step() + ")").toList()), view.createdBy());
    }

    static Progress progress(CampaignView view, Viewer viewer) {
        List<ClusterRow> clusters = view.clusters().stream().map(cluster -> new ClusterRow(cluster.cluster(), cluster.step()
                + cluster.failedStep().map(step -> " at " + step).orElse(""), css(cluster.step()), cluster.failure().orElse(""),
                cluster.machines().stream().map(machine -> new MachineRow(machine.machine(), machine.phase(), css(machine.phase()),
                        machine.osVersion().orElse("?") + " (" + machine.buildVersion().orElse("?") + ")", machine.detail().orElse(""),
                        machine.fix().orElse(""))).toList())).toList();
        return new Progress(summary(view), view.installBy(), !view.finished() && !view.status().equals("paused"),
                "/console/os-updates/" + view.id() + "/progress", viewer, clusters);
    }

    static String css(String state) {
        return switch (state) {
            case "succeeded", "done" -> "ok";
            case "failed", "blocked" -> "bad";
            case "paused", "pending", "checked" -> "muted";
            default -> "warn";
        };
    }
}
