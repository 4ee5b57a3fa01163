package io.macfleet.console;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

/** The console's pages, type-checked against their page records at build time (templates/console/*.html). */
@CheckedTemplate(basePath = "console")
public final class Templates {

    private Templates() {
    }

    public static native TemplateInstance overview(Pages.Overview page);

    /** The live part of the overview, fetched by htmx every few seconds. */
    public static native TemplateInstance fleetTable(Pages.OverviewTable table);

    public static native TemplateInstance machine(Pages.Machine page);

    public static native TemplateInstance clusters(Pages.Clusters page);

    public static native TemplateInstance cluster(Pages.Cluster page);

    /** The cluster page's live part (readiness, diagram, findings, port plan, machines), fetched every few seconds. */
    public static native TemplateInstance clusterBody(Pages.Cluster page);

    public static native TemplateInstance runs(Pages.Runs page);

    public static native TemplateInstance run(Pages.Run page);

    /** A run's live part, fetched by htmx every few seconds while the run can still change. */
    public static native TemplateInstance runProgress(Pages.RunProgress progress);

    public static native TemplateInstance audit(Pages.Audit page);

    public static native TemplateInstance error(Pages.Error page);

    public static native TemplateInstance accounts(Pages.Accounts page);

    public static native TemplateInstance inventory(Pages.Inventory page);
}
