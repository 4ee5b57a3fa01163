package io.macfleet.supervision;

import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.problem.ProblemException;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** The node supervision over the API: each cluster's state, an operator's restart, a rank's log. */
@Tag(name = "supervision")
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1/supervision")
@Produces(MediaType.APPLICATION_JSON)
public class SupervisionResource {

    /**
     * One cluster as its supervisor last saw it, whichever instance supervises it. A stale look (its supervisor stopped
     * looking) is not presented as current: {@code serving} is false and {@code state} starts with "last seen by
     * INSTANCE at TIME"; a stored status this version cannot read has {@code state} "unreadable status ..." and no ranks.
     *
     * @param observedBy the instance that looked (its lease holder id)
     */
    public record ClusterView(String cluster, boolean serving, String state, String endpoint, int restarts, String alert,
                              String acting, Instant actingSince, Instant observedAt, List<RankView> ranks, String observedBy,
                              boolean stale) {
        static ClusterView of(SharedStatus shared, Instant now) {
            return switch (shared) {
                case SharedStatus.Observed observed -> {
                    ClusterStatus status = observed.status();
                    String state = status.diagnosis().explain();
                    yield new ClusterView(status.name(), status.serving() && !observed.stale(), observed.stale() ? observed.lastSeen() + ": " + state : state,
                            status.observation().cluster().endpoint().toString(), status.restarts(), status.alert().orElse(null),
                            status.acting().map(ClusterSupervisor.Acting::what).orElse(null),
                            status.acting().map(ClusterSupervisor.Acting::since).orElse(null), observed.observedAt(),
                            status.observation().ranks().stream().map(rank -> RankView.of(rank, observed.uptime(rank, now).orElse(null))).toList(),
                            observed.observedBy(), observed.stale());
                }
                case SharedStatus.Unreadable unreadable -> new ClusterView(unreadable.cluster(), false, unreadable.explain(), null, 0, null,
                        null, null, unreadable.observedAt(), List.of(), unreadable.observedBy(), unreadable.stale());
            };
        }
    }

    /** One rank; absent numbers are null; uptime counts from when its supervisor first saw the rank's current pid. */
    public record RankView(int rank, String machine, String health, String detail, String daemonState, Long pid, Integer runs,
                           String version, String model, String rdma, Double tokensPerSecond, Double timeToFirstTokenSeconds,
                           Long uptimeSeconds) {
        static RankView of(RankObservation rank, Duration uptime) {
            return new RankView(rank.rank(), rank.machine(), rank.health().name().toLowerCase(java.util.Locale.ROOT), rank.healthDetail(),
                    rank.launchd().map(service -> service.loaded() ? service.state() : "not loaded").orElse("unknown"),
                    rank.pid().orElse(null), rank.runs().orElse(null), rank.version().orElse(null), rank.model().orElse(null),
                    rank.rdma().name().toLowerCase(java.util.Locale.ROOT),
                    rank.tokensPerSecond().isPresent() ? rank.tokensPerSecond().getAsDouble() : null,
                    rank.timeToFirstTokenSeconds().isPresent() ? rank.timeToFirstTokenSeconds().getAsDouble() : null,
                    uptime == null ? null : uptime.toSeconds());
        }
    }

    @Inject
    SupervisionService supervision;

    @Inject
    CurrentUser currentUser;

    @GET
    @Operation(summary = "Every supervised cluster, whichever instance supervises it: serving or not, the endpoint, each rank's state,"
            + " restarts, open alert, who looked and whether that look is stale")
    public List<ClusterView> clusters() {
        Instant now = Instant.now();
        return supervision.statuses().stream().map(status -> ClusterView.of(status, now)).toList();
    }

    @POST
    @Path("/{cluster}/restart")
    @RolesAllowed(Roles.OPERATOR)
    @Operation(summary = "Restart every rank of the cluster in order (closes an open alert)")
    public ClusterRestarted restart(@PathParam("cluster") String cluster) {
        try {
            supervision.restart(cluster, currentUser.actor());
            return new ClusterRestarted(cluster, true, "every rank restarted in order");
        } catch (java.util.NoSuchElementException e) {
            throw new ProblemException(404, "Not Found", e.getMessage());
        } catch (io.macfleet.deployment.NodeService.RefusedException e) {
            throw new ProblemException(409, "Cannot restart", e.getMessage());
        } catch (IOException e) {
            throw new ProblemException(502, "Restart failed", "cluster " + cluster + ": " + e.getMessage());
        }
    }

    /** The answer to a restart. */
    public record ClusterRestarted(String cluster, boolean restarted, String detail) {
    }

    @GET
    @Path("/{cluster}/ranks/{rank}/log")
    @RolesAllowed(Roles.OPERATOR)
    @Produces(MediaType.TEXT_PLAIN)
    @Operation(summary = "The last lines of a rank's node log")
    public String log(@PathParam("cluster") String cluster, @PathParam("rank") int rank, @QueryParam("lines") @DefaultValue("200") String lines) {
        // A String, not an int: JAX-RS answers 404 to a query parameter it cannot convert, and ?lines=abc is a bad request.
        if (!lines.matches("\\d{1,9}")) {
            throw ProblemException.badRequest("lines must be a whole number of lines (1 to 2000), got '" + lines + "'");
        }
        try {
            return supervision.log(cluster, rank, Integer.parseInt(lines), currentUser.actor());
        } catch (java.util.NoSuchElementException e) {
            // An unknown cluster or rank is a resource that does not exist, as an unknown machine is.
            throw new ProblemException(404, "Not Found", e.getMessage());
        } catch (io.macfleet.deployment.NodeService.RefusedException e) {
            throw new ProblemException(409, "Log not readable", e.getMessage());
        } catch (IOException e) {
            throw new ProblemException(502, "Log not readable", "cluster " + cluster + " rank " + rank + ": " + e.getMessage());
        }
    }
}
