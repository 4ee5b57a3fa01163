package io.macfleet.console;

import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.audit.AuditQuery;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.CablingSvg;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.ObservedLink;
import io.macfleet.cabling.PlannedTopology;
import io.macfleet.cabling.PortPlan;
import io.macfleet.facts.Drift;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.MachineFacts;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.provision.OperatorRequest;
import io.macfleet.provision.PlaybookLoader;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.provision.RunView;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.StoredHostKey;
import io.quarkus.qute.RawString;
import io.quarkus.qute.TemplateInstance;
import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The web console for ops staff: server-rendered pages under /console, with htmx refreshing the live parts. Every
 * page needs a signed-in user (viewer); starting a provisioning run and confirming an operator step need an
 * operator, and the accounts area's CSRF filter checks the session's token on every POST. What the console does
 * is audited with the user's name (by the provisioning service it calls).
 */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class ConsoleResource {

    static final int AUDIT_PAGE_SIZE = 50;
    private static final List<String> STATUS_FILTERS = List.of("all", "problems", "ready");

    @Inject
    FleetStatus fleetStatus;

    @Inject
    DesiredStateStore desiredState;

    @Inject
    JdbcAuditLog auditLog;

    @Inject
    DataSource dataSource;

    @Inject
    ProvisioningService provisioning;

    @Inject
    CurrentUser user;

    Viewer viewer() {
        return Viewer.of(user);
    }

    private Pages.Layout layout(String title, String section) {
        return new Pages.Layout(title, section, viewer());
    }

    // ---- overview

    @GET
    public Response overview(@QueryParam("cluster") String cluster, @QueryParam("status") String status) {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        Optional<Response> invalid = checkFilters(fleet, cluster, status);
        if (invalid.isPresent()) {
            return invalid.get();
        }
        String selectedCluster = blank(cluster) ? "" : cluster;
        String selectedStatus = blank(status) ? "all" : status;
        List<Pages.Choice> clusterChoices = new ArrayList<>();
        clusterChoices.add(new Pages.Choice("All clusters", "", overviewUrl("", selectedStatus), selectedCluster.isEmpty()));
        fleet.clusters().stream().map(FleetStatus.ClusterSummary::name).sorted().forEach(name ->
                clusterChoices.add(new Pages.Choice(name, name, overviewUrl(name, selectedStatus), name.equals(selectedCluster))));
        if (fleet.machines().stream().anyMatch(row -> row.cluster() == null)) {
            clusterChoices.add(new Pages.Choice("No cluster", "-", overviewUrl("-", selectedStatus), "-".equals(selectedCluster)));
        }
        List<Pages.Choice> statusChoices = STATUS_FILTERS.stream()
                .map(value -> new Pages.Choice(value, value, overviewUrl(selectedCluster, value), value.equals(selectedStatus))).toList();
        Pages.Overview page = new Pages.Overview(layout("Fleet overview", "overview"), clusterChoices, statusChoices,
                "all".equals(selectedStatus) ? "" : selectedStatus, table(fleet, selectedCluster, selectedStatus));
        return page(200, Templates.overview(page));
    }

    /** The overview's table and counts alone: what htmx swaps in every few seconds. */
    @GET
    @Path("fleet-table")
    public Response fleetTable(@QueryParam("cluster") String cluster, @QueryParam("status") String status) {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        Optional<Response> invalid = checkFilters(fleet, cluster, status);
        if (invalid.isPresent()) {
            return invalid.get();
        }
        return Response.fromResponse(page(200, Templates.fleetTable(table(fleet, blank(cluster) ? "" : cluster, blank(status) ? "all" : status))))
                .header("Cache-Control", "no-store").build();
    }

    private Optional<Response> checkFilters(FleetStatus.Fleet fleet, String cluster, String status) {
        if (!blank(status) && !STATUS_FILTERS.contains(status)) {
            return Optional.of(error(400, "Unknown status filter", "The status filter '" + status + "' is not one of "
                    + String.join(", ", STATUS_FILTERS) + ".", "/console", "Back to the fleet overview"));
        }
        if (!blank(cluster) && !"-".equals(cluster) && fleet.cluster(cluster).isEmpty()) {
            return Optional.of(error(404, "Cluster not found", "There is no cluster named '" + cluster
                    + "' in the applied inventory.", "/console", "Back to the fleet overview"));
        }
        return Optional.empty();
    }

    Pages.OverviewTable table(FleetStatus.Fleet fleet, String cluster, String status) {
        List<MachineRow> rows = fleet.machines().stream()
                .filter(row -> cluster.isEmpty() || ("-".equals(cluster) ? row.cluster() == null : cluster.equals(row.cluster())))
                .filter(row -> switch (status) {
                    case "problems" -> row.problem();
                    case "ready" -> !row.problem();
                    default -> true;
                })
                .toList();
        List<FleetStatus.ClusterSummary> clusters = fleet.clusters().stream()
                .filter(summary -> cluster.isEmpty() || summary.name().equals(cluster)).toList();
        long problems = fleet.machines().stream().filter(MachineRow::problem).count();
        String description = (cluster.isEmpty() ? "all clusters" : "-".equals(cluster) ? "machines in no cluster" : "cluster " + cluster)
                + ("all".equals(status) ? "" : ", " + ("problems".equals(status) ? "machines with problems" : "ready machines"));
        String empty = fleet.machines().isEmpty() ? "The applied inventory has no machines."
                : "problems".equals(status) ? "No machine has a problem." : "No machine matches " + description + ".";
        return new Pages.OverviewTable(Ages.utc(fleet.at()), fleet.inventoryApplied(), fleet.machines().size(), problems,
                fleet.machines().size() - problems, fleet.clusters().size(), clusters, rows,
                "/console/fleet-table" + query(Map.of("cluster", cluster, "status", "all".equals(status) ? "" : status)),
                description, empty);
    }

    private static String overviewUrl(String cluster, String status) {
        return "/console" + query(Map.of("cluster", cluster, "status", "all".equals(status) ? "" : status));
    }

    // ---- machine

    @GET
    @Path("machines/{name}")
    public Response machine(@PathParam("name") String name) {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        Optional<MachineRow> found = fleet.machine(name);
        if (found.isEmpty()) {
            return error(404, "Machine not found", "There is no machine named '" + name + "' in the applied inventory.",
                    "/console", "Back to the fleet overview");
        }
        MachineRow row = found.get();
        Map<String, Object> document = fleet.machineDocuments().get(name);
        FactsObservation observation = fleet.observations().get(name);
        MachineFacts facts = observation == null ? null : observation.facts();
        String target = row.cluster() == null ? null : fleet.cluster(row.cluster()).map(FleetStatus.ClusterSummary::targetMacos).orElse(null);
        List<Drift.Difference> drift = facts == null ? List.of() : Drift.compare(document, target, facts).differences();
        CablingReport report = row.cluster() == null ? null : fleet.cabling().get(row.cluster());
        List<Pages.FindingView> findings = report == null ? List.of() : report.findings().stream()
                .filter(finding -> finding.machines().contains(name)).map(Pages.FindingView::of).toList();
        Map<?, ?> ssh = document.get("ssh") instanceof Map<?, ?> map ? map : Map.of();
        Optional<StoredHostKey> recorded = new JdbcHostKeyStore(dataSource).find(name);
        Pages.HostKey hostKey = new Pages.HostKey(ssh.get("hostKey") instanceof String pinned ? pinned : null,
                recorded.map(StoredHostKey::keyType).orElse(null), recorded.map(StoredHostKey::fingerprint).orElse(null),
                recorded.map(key -> Ages.utc(key.recordedAt())).orElse(null), recorded.map(StoredHostKey::address).orElse(null));
        List<Pages.AuditRow> audit = auditLog.find(new AuditQuery(name, null, null, null, 15)).stream().map(Pages.AuditRow::of).toList();
        Pages.Machine page = new Pages.Machine(layout(name, "overview"), row,
                String.valueOf(ssh.get("port") == null ? 22 : ssh.get("port")),
                facts == null ? null : Ages.utc(facts.observedAt()), facts == null ? null : Ages.ago(facts.observedAt(), fleet.at()),
                facts == null ? List.of() : facts(facts), drift, facts == null ? List.of() : ports(facts), findings, hostKey, audit,
                "/console/audit" + query(Map.of("machine", name)),
                provisioning.runsOf(name, 10).stream().map(ConsoleResource::summary).toList());
        return page(200, Templates.machine(page));
    }

    private static List<Pages.Fact> facts(MachineFacts facts) {
        List<Pages.Fact> list = new ArrayList<>();
        list.add(new Pages.Fact("Model", facts.modelName() + " (" + facts.modelIdentifier() + ")"));
        list.add(new Pages.Fact("Chip", facts.chip() + ", " + facts.cpuCores() + " CPU cores"
                + (facts.performanceCores() == null ? "" : " (" + facts.performanceCores() + " performance, " + facts.efficiencyCores() + " efficiency)")
                + ", " + facts.gpuCores() + " GPU cores"));
        list.add(new Pages.Fact("Memory", facts.memoryGigabytes() + " GB"));
        list.add(new Pages.Fact("Serial number", facts.serialNumber()));
        list.add(new Pages.Fact("Hardware UUID", facts.hardwareUuid()));
        list.add(new Pages.Fact("macOS", facts.macosVersion() + " (" + facts.macosBuild() + ")"));
        list.add(new Pages.Fact("RDMA", facts.rdmaEnabled() ? "enabled" + (facts.rdmaDevices().isEmpty() ? ", no devices" : ": " + String.join(", ", facts.rdmaDevices())) : "disabled"));
        list.add(new Pages.Fact("Thunderbolt Bridge", facts.thunderboltBridgeActive() ? "active (must be off for RDMA)" : "off"));
        list.add(new Pages.Fact("Bootstrap token", (facts.bootstrapTokenSupportedOnServer() ? "supported by the MDM server" : "not supported by the MDM server")
                + ", " + (facts.bootstrapTokenEscrowed() ? "escrowed" : "not escrowed")));
        list.add(new Pages.Fact("Uptime", duration(facts.uptimeSeconds())));
        list.add(new Pages.Fact("Free disk (/)", String.format(Locale.ROOT, "%.1f GB", facts.freeDiskBytes() / 1e9)));
        return list;
    }

    private static String duration(long seconds) {
        long days = seconds / 86400;
        long hours = seconds % 86400 / 3600;
        long minutes = seconds % 3600 / 60;
        return (days > 0 ? days + " d " : "") + (days > 0 || hours > 0 ? hours + " h " : "") + minutes + " min";
    }

    private static List<Pages.Port> ports(MachineFacts facts) {
        return facts.thunderboltPorts().stream().map(port -> new Pages.Port(port.port(), port.interfaceName() == null ? "" : port.interfaceName(),
                port.connected() ? "connected" : "empty",
                port.speedGbps() == null ? "" : String.format(Locale.ROOT, "%.0f Gb/s", port.speedGbps()),
                port.peerMachine(), port.peerPort(), port.peerModel() == null ? "" : port.peerModel(),
                String.join(", ", port.otherDevices()))).toList();
    }

    // ---- clusters

    @GET
    @Path("clusters")
    public Response clusters() {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        List<FleetStatus.ClusterSummary> sorted = fleet.clusters().stream().sorted(java.util.Comparator.comparing(FleetStatus.ClusterSummary::name)).toList();
        return page(200, Templates.clusters(new Pages.Clusters(layout("Clusters", "clusters"), sorted, fleet.inventoryApplied())));
    }

    @GET
    @Path("clusters/{name}")
    public Response cluster(@PathParam("name") String name) {
        return clusterPage(name, false);
    }

    /** The cluster page without its frame: what htmx swaps in every few seconds. */
    @GET
    @Path("clusters/{name}/live")
    public Response clusterLive(@PathParam("name") String name) {
        return clusterPage(name, true);
    }

    private Response clusterPage(String name, boolean live) {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        Optional<FleetStatus.ClusterSummary> found = fleet.cluster(name);
        if (found.isEmpty()) {
            return error(404, "Cluster not found", "There is no cluster named '" + name + "' in the applied inventory.",
                    "/console/clusters", "Back to the clusters");
        }
        FleetStatus.ClusterSummary summary = found.get();
        CablingReport report = fleet.cabling().get(name);
        List<MachineRow> machines = fleet.machines().stream().filter(row -> name.equals(row.cluster())).toList();
        List<Pages.PlanRow> plan = new ArrayList<>();
        String planNote = "";
        if (report != null) {
            Map<String, Object> clusterDocument = desiredState.cluster(name).orElseThrow();
            List<Map<String, Object>> members = machines.stream().map(row -> fleet.machineDocuments().get(row.name())).toList();
            PlannedTopology planned = ClusterCabling.plan(clusterDocument, members);
            List<PlannedTopology.PlannedLink> cables = new ArrayList<>();
            if (planned.kind() == PlannedTopology.Kind.EXPLICIT) {
                cables.addAll(planned.links());
                planNote = "The inventory lists these cables (explicit topology).";
            } else {
                try {
                    for (PlannedTopology.PlannedLink cable : PortPlan.fullMesh(name, planned.machines()).cables()) {
                        List<PlannedTopology.PlannedLink> pinned = planned.linksBetween(cable.first().machine(), cable.second().machine());
                        cables.add(pinned.isEmpty() ? cable : pinned.getFirst());
                    }
                    planNote = "Full mesh: every cable joins the same port number on both Macs; port 1, next to the Ethernet port, stays free"
                            + (planned.links().isEmpty() ? "." : "; ports the inventory pins are used as given.");
                } catch (IllegalArgumentException e) {
                    planNote = e.getMessage();
                }
            }
            int number = 1;
            for (PlannedTopology.PlannedLink cable : cables) {
                plan.add(new Pages.PlanRow(number++, cable.first().machine() + " port " + cable.first().port(),
                        cable.second().machine() + " port " + cable.second().port(), cableState(cable, report)));
            }
        }
        RawString svg = new RawString(report == null ? "" : CablingSvg.render(report));
        Pages.Cluster page = new Pages.Cluster(layout("Cluster " + name, "clusters"), summary, svg,
                report == null ? List.of() : report.findings().stream().map(Pages.FindingView::of).toList(), plan, planNote, machines,
                "/console/audit" + query(Map.of("text", name)), provisioning.playbookNames());
        if (live) {
            return Response.fromResponse(page(200, Templates.clusterBody(page))).header("Cache-Control", "no-store").build();
        }
        return page(200, Templates.cluster(page));
    }

    /** How a planned cable looks in the latest facts. */
    private static String cableState(PlannedTopology.PlannedLink cable, CablingReport report) {
        Optional<ObservedLink> exact = report.links().stream().filter(link -> link.joins(cable.first().machine(), cable.second().machine())
                && link.endOf(cable.first().machine()).equals(cable.first()) && link.endOf(cable.second().machine()).equals(cable.second())).findFirst();
        if (exact.isPresent()) {
            ObservedLink link = exact.get();
            if (!link.confirmed()) {
                return "seen from one side only";
            }
            return link.isThunderbolt5() ? "cabled, Thunderbolt 5" : "cabled, slower than Thunderbolt 5";
        }
        List<ObservedLink> elsewhere = report.links().stream().filter(link -> link.joins(cable.first().machine(), cable.second().machine())).toList();
        if (!elsewhere.isEmpty()) {
            return "cabled on other ports: " + elsewhere.stream().map(ObservedLink::toString).collect(Collectors.joining(", "));
        }
        return "not cabled";
    }

    // ---- provisioning runs

    @GET
    @Path("runs")
    public Response runs() {
        List<Pages.RunSummary> runs = provisioning.runs(100).stream().map(ConsoleResource::summary).toList();
        List<String> clusters = desiredState.clusters().stream().map(cluster -> String.valueOf(cluster.get("name"))).sorted().toList();
        return page(200, Templates.runs(new Pages.Runs(layout("Provisioning runs", "runs"), runs, clusters, provisioning.playbookNames())));
    }

    @GET
    @Path("runs/{id}")
    public Response run(@PathParam("id") String id) {
        return runPage(id, false);
    }

    /** The run's live part alone: what htmx swaps in every few seconds while the run can still change. */
    @GET
    @Path("runs/{id}/progress")
    public Response runProgress(@PathParam("id") String id) {
        return runPage(id, true);
    }

    private Response runPage(String id, boolean live) {
        Optional<RunView.Detail> found = runId(id).flatMap(provisioning::run);
        if (found.isEmpty()) {
            return error(404, "Run not found", "There is no provisioning run " + id + ".", "/console/runs", "Back to the runs");
        }
        Pages.RunProgress progress = progress(found.get());
        if (live) {
            return Response.fromResponse(page(200, Templates.runProgress(progress))).header("Cache-Control", "no-store").build();
        }
        return page(200, Templates.run(new Pages.Run(layout("Run " + id, "runs"), progress)));
    }

    /**
     * "Done, verify now" on a step that waits for a person: verifies the machine over SSH at once, records who
     * confirmed (audit log and the run's confirmations), and continues the run when verified. Back to the run page,
     * which shows what the verification found.
     */
    @POST
    @Path("runs/{id}/confirm")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response confirm(@PathParam("id") String id, @FormParam("machine") String machine, @FormParam("step") String step) {
        Optional<Long> run = runId(id);
        if (run.isEmpty()) {
            return error(404, "Run not found", "There is no provisioning run " + id + ".", "/console/runs", "Back to the runs");
        }
        if (blank(machine) || blank(step)) {
            return error(400, "Incomplete confirmation", "The form must name the machine and the step that were done.",
                    "/console/runs/" + run.get(), "Back to run " + run.get());
        }
        try {
            provisioning.confirmOperatorStep(run.get(), machine, step, user.actor());
        } catch (ProvisioningService.NotFoundException e) {
            return error(404, "Step not found", Pages.sentence(e.getMessage()) + ".", "/console/runs/" + run.get(), "Back to run " + run.get());
        } catch (ProvisioningService.InvalidRequestException e) {
            return error(409, "Nothing to confirm", Pages.sentence(e.getMessage()) + ": someone may have confirmed it already.",
                    "/console/runs/" + run.get(), "Back to run " + run.get());
        }
        return Response.seeOther(URI.create("/console/runs/" + run.get() + "#task-" + machine + "-" + step)).build();
    }

    /** Starts (or resumes) provisioning of a cluster, or of one machine, in the background; then shows the run. */
    @POST
    @Path("runs")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response start(@FormParam("cluster") String cluster, @FormParam("machine") String machine, @FormParam("playbook") String playbook) {
        String back = blank(cluster) ? "/console/runs" : "/console/clusters/" + URLEncoder.encode(cluster, StandardCharsets.UTF_8).replace("+", "%20");
        String backLabel = blank(cluster) ? "Back to the runs" : "Back to cluster " + cluster;
        if (blank(cluster) && blank(machine)) {
            return error(400, "Nothing to provision", "Choose a cluster (or a machine) to provision.", back, backLabel);
        }
        if (!blank(playbook) && !provisioning.playbookNames().contains(playbook)) {
            return error(400, "Unknown playbook", "There is no playbook named '" + playbook + "'; there are "
                    + String.join(", ", provisioning.playbookNames()) + ".", back, backLabel);
        }
        try {
            long id = provisioning.startInBackground(new ProvisioningService.Request(blank(cluster) ? null : cluster,
                    blank(machine) ? List.of() : List.of(machine), blank(playbook) ? null : playbook, null, null, false, null), user.actor());
            return Response.seeOther(URI.create("/console/runs/" + id)).build();
        } catch (ProvisioningService.InvalidRequestException | PlaybookLoader.InvalidPlaybookException | IllegalArgumentException e) {
            return error(400, "Cannot start provisioning", Pages.sentence(e.getMessage()) + ".", back, backLabel);
        } catch (ProvisioningService.RunBusyException e) {
            return error(409, "Provisioning is already running", Pages.sentence(e.getMessage()) + ".", back, backLabel);
        }
    }

    private static Optional<Long> runId(String text) {
        try {
            long id = Long.parseLong(text);
            return id > 0 ? Optional.of(id) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    static Pages.RunSummary summary(RunView.Run run) {
        return new Pages.RunSummary(String.valueOf(run.id()), run.playbook(), run.status(), runCss(run.status()), Ages.utc(run.createdAt()),
                run.cluster() == null ? String.join(", ", run.machines()) : run.cluster() + ": " + String.join(", ", run.machines()), run.startedBy());
    }

    private static String runCss(String status) {
        return switch (status) {
            case "succeeded" -> "ok";
            case "failed" -> "bad";
            case "waiting-for-operator" -> "warn";
            default -> "none";
        };
    }

    private static String stepCss(String status) {
        return switch (status) {
            case "done", "skipped-already-done", "skipped-not-applicable", "ready" -> "ok";
            case "failed" -> "bad";
            case "waiting-for-operator", "running", "in-progress" -> "warn";
            default -> "none";
        };
    }

    private Pages.RunProgress progress(RunView.Detail detail) {
        RunView.Run run = detail.run();
        List<String> stepNames = detail.steps().stream().map(RunView.Step::step).distinct().toList();
        Map<String, String> states = detail.machineStates();
        List<Pages.RunMachine> machines = new ArrayList<>();
        for (String machine : run.machines()) {
            List<Pages.StepCell> cells = detail.steps().stream().filter(step -> step.machine().equals(machine))
                    .map(step -> new Pages.StepCell(step.step(), step.status(), stepCss(step.status()),
                            step.summary() == null ? "" : step.summary(), step.attempts())).toList();
            String state = states.getOrDefault(machine, "in-progress");
            machines.add(new Pages.RunMachine(machine, state, stepCss(state), cells));
        }
        List<Pages.OperatorTask> waiting = new ArrayList<>();
        for (RunView.Step step : detail.steps()) {
            if (!step.status().equals("waiting-for-operator")) {
                continue;
            }
            Optional<RunView.Confirmation> last = detail.confirmations().stream()
                    .filter(confirmation -> confirmation.machine().equals(step.machine()) && confirmation.step().equals(step.step()))
                    .reduce((first, second) -> second);
            String lastText = last.map(confirmation -> (confirmation.verified() ? "Verified" : "Not verified yet")
                    + " after " + confirmation.actor() + " confirmed at " + Ages.utc(confirmation.confirmedAt()) + ": " + confirmation.detail()).orElse(null);
            OperatorRequest request = step.operatorRequest();
            if (request != null) {
                waiting.add(new Pages.OperatorTask(step.machine(), step.step(), request.title(), request.instructions(), request.expect(),
                        request.whyNeeded(), request.expectedWait(), lastText, last.map(RunView.Confirmation::verified).orElse(false)));
            } else {
                // Stored before walkthroughs were kept as such: the summary holds the same walkthrough as text.
                waiting.add(new Pages.OperatorTask(step.machine(), step.step(), "Waiting for a person at " + step.machine(),
                        step.summary() == null ? List.of() : step.summary().lines().skip(1).map(String::strip).toList(), "", null, "a few minutes",
                        lastText, last.map(RunView.Confirmation::verified).orElse(false)));
            }
        }
        List<Pages.ConfirmationView> confirmations = detail.confirmations().reversed().stream()
                .map(confirmation -> new Pages.ConfirmationView(confirmation.machine(), confirmation.step(), confirmation.actor(),
                        Ages.utc(confirmation.confirmedAt()), confirmation.verified(), confirmation.detail() == null ? "" : confirmation.detail())).toList();
        boolean live = !run.status().equals("succeeded") && !run.status().equals("failed");
        return new Pages.RunProgress(summary(run), "/console/runs/" + run.id() + "/progress", live, stepNames, machines, waiting, confirmations, viewer());
    }


    // ---- audit

    @GET
    @Path("audit")
    public Response audit(@QueryParam("text") String text, @QueryParam("actor") String actor, @QueryParam("machine") String machine,
                          @QueryParam("from") String from, @QueryParam("to") String to, @QueryParam("page") String pageNumber) {
        Pages.AuditForm form = new Pages.AuditForm(trim(text), trim(actor), trim(machine), trim(from), trim(to));
        Pages.Layout layout = layout("Audit log", "audit");
        int page;
        AuditQuery query;
        try {
            page = blank(pageNumber) ? 1 : Integer.parseInt(pageNumber.strip());
            if (page < 1) {
                throw new NumberFormatException();
            }
            query = new AuditQuery(emptyToNull(form.machine()), null, emptyToNull(form.actor()), time("from", form.from(), false),
                    time("to", form.to(), true), emptyToNull(form.text()), (page - 1) * AUDIT_PAGE_SIZE, AUDIT_PAGE_SIZE);
        } catch (NumberFormatException e) {
            return page(400, Templates.audit(new Pages.Audit(layout, form, "The page '" + pageNumber
                    + "' is not a page number (1, 2, ...).", List.of(), 0, 0, 0, null, null)));
        } catch (IllegalArgumentException e) {
            return page(400, Templates.audit(new Pages.Audit(layout, form, e.getMessage(), List.of(), 0, 0, 0, null, null)));
        }
        List<Pages.AuditRow> entries = auditLog.find(query).stream().map(Pages.AuditRow::of).toList();
        long total = auditLog.count(query);
        long first = entries.isEmpty() ? 0 : query.offset() + 1L;
        long last = query.offset() + (long) entries.size();
        Map<String, String> parameters = new LinkedHashMap<>();
        parameters.put("text", form.text());
        parameters.put("actor", form.actor());
        parameters.put("machine", form.machine());
        parameters.put("from", form.from());
        parameters.put("to", form.to());
        String previous = page > 1 ? auditUrl(parameters, page - 1) : null;
        String next = last < total ? auditUrl(parameters, page + 1) : null;
        return page(200, Templates.audit(new Pages.Audit(layout, form, null, entries, total, first, last, previous, next)));
    }

    private static String auditUrl(Map<String, String> parameters, int page) {
        Map<String, String> withPage = new LinkedHashMap<>(parameters);
        withPage.put("page", page == 1 ? "" : String.valueOf(page));
        return "/console/audit" + query(withPage);
    }

    /**
     * A time of the search form: an ISO time with zone, a date-time without one (as the browser's datetime-local
     * input sends it; read as UTC), or a date (its start, or for the end of a range the start of the next day).
     */
    static Instant time(String field, String text, boolean endOfRange) {
        if (text.isEmpty()) {
            return null;
        }
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException notZoned) {
            try {
                return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException notLocal) {
                try {
                    LocalDate date = LocalDate.parse(text);
                    return (endOfRange ? date.plusDays(1) : date).atStartOfDay().toInstant(ZoneOffset.UTC);
                } catch (DateTimeParseException notDate) {
                    throw new IllegalArgumentException("'" + field + "' is not a time: '" + text
                            + "'; expected e.g. 2026-11-22T10:00 (UTC), 2026-11-22T10:00:00Z or 2026-11-22");
                }
            }
        }
    }

    // ---- assets and errors

    @GET
    @Path("static/{file: console\\.css|console\\.js|htmx\\.min\\.js}")
    @Produces(MediaType.WILDCARD)
    @PermitAll
    public Response asset(@PathParam("file") String file) {
        return ConsoleAssets.response(file).orElseGet(() -> error(404, "Not found", "There is no console asset named '" + file + "'.",
                "/console", "Back to the fleet overview"));
    }

    /** Any other address under /console: a page that says so, instead of a bare 404. */
    @GET
    @Path("{path: (?!static/).+}")
    public Response unknown(@PathParam("path") String path) {
        return error(404, "Page not found", "The console has no page at /console/" + path + ".", "/console", "Back to the fleet overview");
    }

    private Response error(int status, String heading, String message, String backUrl, String backLabel) {
        return Pages.error(viewer(), status, heading, message, backUrl, backLabel);
    }

    private static Response page(int status, TemplateInstance template) {
        return Pages.response(status, template);
    }

    // ---- small helpers

    static String query(Map<String, String> parameters) {
        String joined = parameters.entrySet().stream().filter(entry -> entry.getValue() != null && !entry.getValue().isEmpty())
                .sorted(Map.Entry.comparingByKey())
                .map(entry -> entry.getKey() + "=" + URLEncoder.encode(entry.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return joined.isEmpty() ? "" : "?" + joined;
    }

    private static boolean blank(String text) {
        return text == null || text.isBlank();
    }

    private static String trim(String text) {
        return text == null ? "" : text.strip();
    }

    private static String emptyToNull(String text) {
        return text.isEmpty() ? null : text;
    }
}
