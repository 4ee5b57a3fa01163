package io.macfleet.console;

import io.macfleet.fleet.MachineRow;
import io.macfleet.fleet.FleetStatus;
import io.macfleet.audit.AuditEntry;
import io.macfleet.cabling.Finding;
import io.macfleet.facts.Drift;
import io.quarkus.qute.RawString;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/** What each console page shows, computed before rendering so that templates only lay it out. */
public final class Pages {

    private Pages() {
    }

    /**
     * What every page shares.
     *
     * @param section the navigation entry to mark as current: overview, clusters, runs, audit
     */
    public record Layout(String title, String section, Viewer viewer) {
        public boolean current(String entry) {
            return entry.equals(section);
        }
    }

    /** One choice of a filter, with the link that selects it. */
    public record Choice(String label, String value, String url, boolean selected) {
    }

    public record Overview(Layout layout, List<Choice> clusterChoices, List<Choice> statusChoices, String status, OverviewTable table) {
    }

    /**
     * The live part of the overview (what htmx fetches every few seconds).
     *
     * @param refreshUrl the fragment's own address, filters included
     * @param emptyMessage why no row is shown when the filters leave none
     * @param columns the headings of the status columns, in the order of each row's cells
     */
    public record OverviewTable(String refreshedAt, boolean inventoryApplied, int machineCount, long problemCount,
                                long readyCount, int clusterCount, List<FleetStatus.ClusterSummary> clusters,
                                List<String> columns, List<MachineRow> rows, String refreshUrl, String filterDescription, String emptyMessage) {
        public String caption() {
            return "Machines of " + filterDescription + ", problems first";
        }

        /** Clusters whose supervision says they do not serve (their card says "not serving" too). */
        public long notServingCount() {
            return clusters.stream().filter(cluster -> cluster.readiness().label().equals("not serving")).count();
        }
    }

    public record Fact(String label, String value) {
    }

    public record Port(int port, String interfaceName, String state, String speed, String peerMachine, Integer peerPort,
                       String peerModel, String otherDevices) {
    }

    public record HostKey(String pinned, String recordedType, String recordedFingerprint, String recordedAt, String recordedAddress) {
        public boolean recorded() {
            return recordedFingerprint != null;
        }

        /** The inventory pins one key and another one was recorded on first contact. */
        public boolean mismatch() {
            return pinned != null && recordedFingerprint != null && !pinned.equals(recordedFingerprint);
        }
    }

    public record AuditRow(long id, String at, String actor, String machine, String action, String outcome, String detail) {
        static AuditRow of(AuditEntry entry) {
            var event = entry.event();
            return new AuditRow(entry.id(), Ages.utc(event.at()), event.actor(), event.machine(), event.action(),
                    event.outcome().name().toLowerCase(Locale.ROOT), event.detail());
        }

        public boolean failed() {
            return "failure".equals(outcome);
        }
    }

    public record FindingView(String severity, String code, String message, String fix, List<String> machines) {
        static FindingView of(Finding finding) {
            return new FindingView(finding.severity().name().toLowerCase(Locale.ROOT),
                    finding.code().name().toLowerCase(Locale.ROOT).replace('_', '-'), finding.message(), finding.fix(), finding.machines());
        }

        public String css() {
            return switch (severity) {
                case "error" -> "bad";
                case "warning" -> "warn";
                default -> "none";
            };
        }
    }

    /**
     * A provisioning run as the lists show it.
     *
     * @param state running, waiting for an operator, succeeded, failed
     */
    public record RunSummary(String id, String playbook, String state, String stateCss, String startedAt, String machines, String actor) {
    }

    public record Machine(Layout layout, MachineRow row, String sshPort, String observedAt, String observedAgo, List<Fact> facts,
                          List<Drift.Difference> drift, List<Port> ports, List<FindingView> findings, HostKey hostKey,
                          List<AuditRow> audit, String auditUrl, List<RunSummary> runs) {
        public boolean hasFacts() {
            return observedAt != null;
        }
    }

    public record PlanRow(int number, String from, String to, String state) {
    }

    /**
     * @param columns the headings of the status columns of the machine table
     * @param playbooks what the "provision this cluster" form offers
     */
    public record Cluster(Layout layout, FleetStatus.ClusterSummary summary, RawString svg, List<FindingView> findings,
                          List<PlanRow> portPlan, String portPlanNote, List<String> columns, List<MachineRow> machines, String auditUrl, List<String> playbooks) {
    }

    public record Clusters(Layout layout, List<FleetStatus.ClusterSummary> clusters, boolean inventoryApplied) {
    }

    /** The audit search form as submitted (empty strings for unused fields, so the inputs show them back). */
    public record AuditForm(String text, String actor, String machine, String from, String to, String exclude) {
        public boolean filtered() {
            return !(text.isEmpty() && actor.isEmpty() && machine.isEmpty() && from.isEmpty() && to.isEmpty() && exclude.isEmpty());
        }

        /** The actions to leave out, as the CLI's --exclude-action takes them: names or prefixes ending in *, comma-separated. */
        public List<String> excludedActions() {
            return java.util.Arrays.stream(exclude.split(",")).map(String::strip).filter(action -> !action.isEmpty()).toList();
        }
    }

    public record Audit(Layout layout, AuditForm form, String error, List<AuditRow> entries, long total, long first, long last,
                        String previousUrl, String nextUrl) {
    }

    /** @param clusters and playbooks: what the "start provisioning" form offers */
    public record Runs(Layout layout, List<RunSummary> runs, List<String> clusters, List<String> playbooks) {
    }

    /** One step on one machine in a run's grid. */
    public record StepCell(String step, String status, String css, String summary, int attempts) {
    }

    /** One machine's row of a run: its state and every step in playbook order. */
    public record RunMachine(String machine, String state, String css, List<StepCell> steps) {
    }

    /**
     * A step waiting for a person at a machine: the walkthrough and the confirmation form.
     *
     * @param lastConfirmation what the last "done, verify now" found, or null
     * @param details what the checks saw (commands, patterns, output), folded away under "Details", or null
     */
    public record OperatorTask(String machine, String step, String title, List<String> instructions, String expect, String whyNeeded,
                               String expectedWait, String lastConfirmation, boolean lastVerified, String details) {

        public OperatorTask(String machine, String step, String title, List<String> instructions, String expect, String whyNeeded,
                            String expectedWait, String lastConfirmation, boolean lastVerified) {
            this(machine, step, title, instructions, expect, whyNeeded, expectedWait, lastConfirmation, lastVerified, null);
        }
    }

    /** Who confirmed what, and what the verification said. */
    public record ConfirmationView(String machine, String step, String actor, String at, boolean verified, String detail) {
    }

    /**
     * A run's live part (refetched every few seconds while it is not finished).
     *
     * @param live the run can still change: the fragment keeps polling
     */
    public record RunProgress(RunSummary run, String refreshUrl, boolean live, List<String> stepNames, List<RunMachine> machines,
                              List<OperatorTask> waiting, List<ConfirmationView> confirmations, Viewer viewer) {
    }

    public record Run(Layout layout, RunProgress progress) {
    }

    /** One account as the accounts page lists it. */
    public record AccountRow(String name, String role, boolean disabled, String created, boolean self, long tokens) {
    }

    /** One API token as the accounts page lists it (never the token itself). */
    public record TokenRow(long id, String user, String name, String created, String lastUsed, String expires, boolean expired) {
    }

    /**
     * The accounts page (admins).
     *
     * @param message what the last change did, or null
     * @param error why the last change was refused, or null
     * @param newName and newRole: the add form as submitted, shown again after an error (never the password)
     */
    public record Accounts(Layout layout, List<AccountRow> accounts, List<TokenRow> tokens, List<String> roles, String message, String error,
                           String newName, String newRole) {
    }

    /** One change of an inventory plan, with its field changes in words. */
    public record PlanChange(String kind, String action, String name, List<String> fields) {
    }

    /**
     * The inventory page: what is applied, and (admins) a document to plan and apply.
     *
     * @param yaml the document as submitted, shown again
     * @param plan what applying it would change (or changed, when {@code applied}); null before planning
     */
    public record Inventory(Layout layout, int clusters, int machines, List<AuditRow> applies, String yaml, List<String> errors,
                            List<PlanChange> plan, boolean applied, String summary) {
    }

    /** An error page: what went wrong, in words, and where to go from here. */
    public record Error(Layout layout, int status, String heading, String message, String backUrl, String backLabel) {
    }

    /** A message of a lower layer as a sentence of a page: "no user named 'x'" becomes "No user named 'x'". */
    static String sentence(String message) {
        return message.isEmpty() ? message : Character.toUpperCase(message.charAt(0)) + message.substring(1);
    }

    /** Rendered here rather than by a message body writer: quarkus-rest-qute is not available for this platform version. */
    static jakarta.ws.rs.core.Response response(int status, io.quarkus.qute.TemplateInstance template) {
        return jakarta.ws.rs.core.Response.status(status).type(jakarta.ws.rs.core.MediaType.TEXT_HTML_TYPE.withCharset("UTF-8"))
                .entity(template.render()).build();
    }

    /** An error page: what went wrong, in words, and a link to where to go from here. */
    static jakarta.ws.rs.core.Response error(Viewer viewer, int status, String heading, String message, String backUrl, String backLabel) {
        return response(status, Templates.error(new Error(new Layout(heading, "", viewer), status, heading, message, backUrl, backLabel)));
    }
}
