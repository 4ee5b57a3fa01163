package io.macfleet.console;

import io.macfleet.accounts.Roles;
import io.macfleet.supervision.ClusterStatus;
import io.macfleet.supervision.RankObservation;
import io.macfleet.supervision.SharedStatus;
import io.macfleet.supervision.SupervisionService;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.net.URI;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/** The node supervision in the console: per cluster serving or not, per rank state; operators restart and read logs. */
@Path("/console/supervision")
@Produces(MediaType.TEXT_HTML)
public class SupervisionConsoleResource {

    /** The page's templates (templates/console/supervision*.html), checked against these records at build time. */
    @CheckedTemplate(basePath = "console")
    static final class SupervisionTemplates {
        static native TemplateInstance supervision(Page page);

        static native TemplateInstance supervisionBanner(List<String> alerts);
    }

    public record Page(Pages.Layout layout, List<ClusterRow> clusters, List<RuntimeClusterRow> runtimeClusters, String logTitle, String log) {
    }

    /** A cluster served by llama.cpp or MLX as its supervisor last saw it: one row per daemon on each Mac. */
    public record RuntimeClusterRow(String name, String runtime, boolean serving, String state, String endpoint, String alert, String acting,
                                    String seen, List<DaemonRow> daemons) {
    }

    /** @param link the link (RDMA or TCP, and why) of a daemon that ends one between Macs, "–" otherwise */
    public record DaemonRow(String machine, int rank, String label, String health, String healthCss, String daemon, String pid, String runs,
                            String lastExit, String probe, String link) {
    }

    /**
     * @param acting the supervisor's action under way ("coordinated reboot since 09:31:05 UTC"), or null
     * @param seen who looked and when: "seen by INSTANCE at TIME", or "last seen by INSTANCE at TIME" when stale
     * @param stale its supervisor stopped looking: the state is the last one seen, not the current one
     * @param readable false for a stored status this version cannot read (state says why; no ranks)
     */
    public record ClusterRow(String name, boolean serving, String state, String endpoint, int restarts, String alert, String acting,
                             List<RankRow> ranks, String seen, boolean stale, boolean readable) {
    }

    public record RankRow(int rank, String machine, String health, String healthCss, String daemon, String pid, String runs, String version,
                          String uptime, String tokensPerSecond, String timeToFirstToken, String rdma) {
    }

    private final SupervisionService supervision;
    private final ConsoleFrame frame;
    private final io.macfleet.runtime.RuntimeService runtimes;

    @Inject
    public SupervisionConsoleResource(SupervisionService supervision, ConsoleFrame frame, io.macfleet.runtime.RuntimeService runtimes) {
        this.supervision = supervision;
        this.frame = frame;
        this.runtimes = runtimes;
    }

    @GET
    public Response page(@QueryParam("cluster") String cluster, @QueryParam("rank") Integer rank, @QueryParam("machine") String machine) {
        String logTitle = null;
        String log = null;
        if (cluster != null && machine != null) {
            // A daemon of a llama.cpp or MLX cluster: the logs of the runtime's daemons on that Mac.
            if (!frame.viewer().operator()) {
                return frame.error(403, "Operators only", "Reading a daemon's log needs the operator role.", "/console/supervision", "Back");
            }
            logTitle = cluster + " on " + machine;
            try {
                log = runtimes.logs(cluster, machine, 200, io.macfleet.ssh.SshSettings.defaults(frame.actor()));
            } catch (RuntimeException e) {
                log = "not readable: " + e.getMessage();
            }
        } else if (cluster != null && rank != null) {
            if (!frame.viewer().operator()) {
                return frame.error(403, "Operators only", "Reading a rank's log needs the operator role.", "/console/supervision", "Back");
            }
            logTitle = cluster + " rank " + rank;
            try {
                log = supervision.log(cluster, rank, 200, frame.actor());
            } catch (IOException | RuntimeException e) {
                log = "not readable: " + e.getMessage();
            }
        }
        Instant now = Instant.now();
        List<ClusterRow> rows = supervision.statuses().stream().map(status -> row(status, now)).toList();
        List<RuntimeClusterRow> runtimeRows = supervision.runtimeLooks().stream().map(SupervisionConsoleResource::row).toList();
        return ConsoleSupport.page(200, SupervisionTemplates.supervision(new Page(frame.layout("Supervision", "supervision"), rows, runtimeRows,
                logTitle, log)));
    }

    /** The alert banner every page fetches (empty when nothing needs an operator). */
    @GET
    @Path("banner")
    public Response banner() {
        return ConsoleSupport.live(SupervisionTemplates.supervisionBanner(supervision.alerts()));
    }

    @POST
    @Path("{cluster}/restart")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response restart(@PathParam("cluster") String cluster) {
        try {
            supervision.restart(cluster, frame.actor());
        } catch (io.macfleet.deployment.NodeService.RefusedException e) {
            return frame.error(409, "Cannot restart", Pages.sentence(e.getMessage()) + ".", "/console/supervision", "Back to supervision");
        } catch (java.util.NoSuchElementException e) {
            return frame.error(404, "Cluster not found", Pages.sentence(e.getMessage()) + ".", "/console/supervision", "Back to supervision");
        } catch (IOException e) {
            return frame.error(502, "Restart failed", Pages.sentence(e.getMessage()) + ".", "/console/supervision", "Back to supervision");
        }
        return Response.seeOther(URI.create("/console/supervision")).build();
    }

    /** The rows of a llama.cpp or MLX cluster; a pure function of the look, so the wording is tested without Macs. */
    static RuntimeClusterRow row(io.macfleet.supervision.RuntimeLook look) {
        List<DaemonRow> daemons = look.daemons().stream().map(daemon -> new DaemonRow(daemon.machine(), daemon.rank(), daemon.label(),
                daemon.ready() ? "ready" : daemon.error().or(daemon::problem).map(problem -> "down: " + problem).orElse("down"),
                daemon.ready() ? "ok" : "bad",
                daemon.launchd().loaded() ? daemon.launchd().state() : "not loaded",
                daemon.launchd().pid().isPresent() ? String.valueOf(daemon.launchd().pid().getAsLong()) : "–",
                daemon.launchd().runs().isPresent() ? String.valueOf(daemon.launchd().runs().getAsInt()) : "–",
                io.macfleet.runtime.NodeCommand.lastExit(daemon.launchd().lastExit()), daemon.probe(), daemon.transport().orElse("–"))).toList();
        return new RuntimeClusterRow(look.cluster(), look.runtime(), look.serving(), look.state(), look.endpoint(),
                look.alert().map(alert -> alert.replaceFirst("^cluster " + java.util.regex.Pattern.quote(look.cluster()) + ": ", "")).orElse(null),
                look.acting().orElse(null), "seen by this instance at " + Ages.utc(look.at()), daemons);
    }

    /**
     * The page says each thing once: an alert that ends with the state's own sentence (the supervisor's "gave up after 2
     * restart(s) of the whole cluster: " + the state) shows only what it adds; the state line above says the rest.
     */
    static String alertBeyond(String alert, String state) {
        return alert.endsWith(": " + state) ? alert.substring(0, alert.length() - state.length() - 2) + " (why: the state above)" : alert;
    }

    private static ClusterRow row(SharedStatus shared, Instant now) {
        String seen = shared.stale() ? shared.lastSeen() : "seen by " + shared.observedBy() + " at " + Ages.utc(shared.observedAt());
        if (shared instanceof SharedStatus.Unreadable unreadable) {
            return new ClusterRow(unreadable.cluster(), false, unreadable.explain(), "–", 0, null, null, List.of(), seen, unreadable.stale(), false);
        }
        SharedStatus.Observed observed = (SharedStatus.Observed) shared;
        ClusterStatus status = observed.status();
        List<RankRow> ranks = status.observation().ranks().stream().map(rank -> new RankRow(rank.rank(), rank.machine(),
                rank.health().name().toLowerCase(Locale.ROOT), rank.health() == RankObservation.Health.SERVING ? "ok" : "bad",
                rank.launchd().map(service -> service.loaded() ? service.state() : "not loaded").orElse("unreachable"),
                rank.pid().map(String::valueOf).orElse("–"), rank.runs().map(String::valueOf).orElse("–"), rank.version().orElse("–"),
                observed.uptimeText(rank, now).orElse("–"),
                rank.tokensPerSecond().isPresent() ? String.format(Locale.ROOT, "%.1f", rank.tokensPerSecond().getAsDouble()) : "–",
                rank.timeToFirstTokenSeconds().isPresent() ? String.format(Locale.ROOT, "%.2f s", rank.timeToFirstTokenSeconds().getAsDouble()) : "–",
                rank.rdma().name().toLowerCase(Locale.ROOT).replace('_', ' '))).toList();
        String acting = status.acting().map(under -> under.what() + " since "
                + java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss 'UTC'").withZone(java.time.ZoneOffset.UTC).format(under.since())).orElse(null);
        String explain = status.diagnosis().explain();
        String alert = status.alert().map(text -> alertBeyond(text, explain)).orElse(null);
        return new ClusterRow(status.name(), status.serving() && !observed.stale(), explain,
                status.observation().cluster().endpoint().toString(), status.restarts(), alert, acting, ranks, seen,
                observed.stale(), true);
    }
}
