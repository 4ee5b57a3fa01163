package io.macfleet.observe;

import io.macfleet.facts.Reachability;
import io.macfleet.facts.ObservationStore;
import io.macfleet.accounts.Roles;
import io.macfleet.problem.ProblemException;
import io.macfleet.fleet.FleetStatus;
import io.macfleet.fleet.MachineRow;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.Machine;
import io.macfleet.ssh.MachineResult;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Map;

/** A machine's state (the one notion of ready the console shows) and "Refresh now" for machines and clusters. */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
public class ObservationResource {

    /** One machine as every view shows it: ready or what holds it back, each column's cell, and its reachability. */
    public record MachineStateBody(String machine, String cluster, boolean ready, List<String> notReadyBecause, List<MachineRow.Cell> columns,
                                   Reachability reachability) {
    }

    /** Every machine's state, and how many of them are ready. */
    public record FleetStatesBody(long ready, List<MachineStateBody> machines) {
    }

    /** How a refresh went per machine. */
    public record RefreshBody(List<RefreshedMachine> machines, long elapsedMs) {
    }

    public record RefreshedMachine(String machine, boolean ok, String error) {
    }

    @Inject
    FleetStatus fleetStatus;

    @Inject
    ObservationStore reachability;

    @Inject
    ObservationLoop loop;

    @Inject
    FactsService facts;

    @GET
    @Path("/machines/{name}/state")
    public MachineStateBody state(@PathParam("name") String name) {
        MachineRow row = fleetStatus.fleet().machine(name).orElseThrow(() -> ProblemException.notFound("machine", name));
        return new MachineStateBody(name, row.cluster(), row.ready(), row.notReadyBecause(), row.cells(), reachability.of(name).orElse(null));
    }

    /** Every machine's state, in the order of the overview (problems first). */
    @GET
    @Path("/machines/states")
    public FleetStatesBody states() {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        Map<String, Reachability> reached = reachability.all();
        return new FleetStatesBody(fleet.ready(), fleet.machines().stream()
                .map(row -> new MachineStateBody(row.name(), row.cluster(), row.ready(), row.notReadyBecause(), row.cells(), reached.get(row.name())))
                .toList());
    }

    @POST
    @Path("/machines/{name}/refresh")
    @RolesAllowed(Roles.OPERATOR)
    public RefreshBody refreshMachine(@PathParam("name") String name) {
        Machine machine = facts.machine(name).orElseThrow(() -> ProblemException.notFound("machine", name));
        return refresh(List.of(machine));
    }

    @POST
    @Path("/clusters/{name}/refresh")
    @RolesAllowed(Roles.OPERATOR)
    public RefreshBody refreshCluster(@PathParam("name") String name) {
        if (facts.cluster(name).isEmpty()) {
            throw ProblemException.notFound("cluster", name);
        }
        return refresh(facts.select(name, List.of()));
    }

    private RefreshBody refresh(List<Machine> machines) {
        FactsService.Gathering gathering = loop.refreshNow(machines);
        return new RefreshBody(gathering.results().stream().map(ObservationResource::refreshed).toList(), gathering.elapsed().toMillis());
    }

    private static RefreshedMachine refreshed(MachineResult<?> result) {
        return new RefreshedMachine(result.machine(), result.succeeded(), result.succeeded() ? null : result.describe());
    }
}
