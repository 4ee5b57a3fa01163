package io.macfleet.simulator.api;

import io.macfleet.accounts.Roles;
import jakarta.annotation.security.RolesAllowed;

import io.macfleet.simulator.Cable;
import io.macfleet.simulator.FaultStep;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.demo.DemoEnvironment;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Control endpoint of the Mac Studio simulator. Answers only while `macfleet demo` runs (404 otherwise): list
 * machines and cables, inject faults, power, and type into a Mac's Recovery Terminal.
 */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1/simulator")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SimulatorResource {

    /** A command typed into Recovery's Terminal. */
    public record RecoveryCommand(String command) {
    }

    @GET
    @Path("/machines")
    public Response machines() {
        return withFleet(fleet -> Response.ok(fleet.machines().stream().map(mac -> describe(fleet, mac)).toList()).build());
    }

    @GET
    @Path("/machines/{name}")
    public Response machine(@PathParam("name") String name) {
        return withFleet(fleet -> Response.ok(describe(fleet, fleet.machine(name))).build());
    }

    @GET
    @Path("/cables")
    public Response cables() {
        return withFleet(fleet -> Response.ok(fleet.cabling().all().stream().map(SimulatorResource::describe).toList()).build());
    }

    @POST
    @RolesAllowed(Roles.OPERATOR)
    @Path("/reset")
    public Response reset() {
        DemoEnvironment demo = DemoEnvironment.current();
        if (demo == null) {
            return problem(404, "Simulator not running", "the simulator control API exists only while `macfleet demo` runs");
        }
        return Response.ok(Map.of("result", demo.reset())).build();
    }

    @POST
    @RolesAllowed(Roles.OPERATOR)
    @Path("/faults")
    public Response fault(FaultStep step) {
        if (step == null) {
            return problem(400, "Missing fault", "send a JSON fault step, e.g. {\"machine\":\"studio-02\",\"fault\":\"hang\"}");
        }
        return withFleet(fleet -> Response.ok(Map.of("result", fleet.inject(step))).build());
    }

    @POST
    @RolesAllowed(Roles.OPERATOR)
    @Path("/machines/{name}/recovery")
    public Response enterRecovery(@PathParam("name") String name) {
        return withFleet(fleet -> {
            fleet.enterRecovery(name);
            return Response.ok(describe(fleet, fleet.machine(name))).build();
        });
    }

    @POST
    @RolesAllowed(Roles.OPERATOR)
    @Path("/machines/{name}/recovery/commands")
    public Response recoveryCommand(@PathParam("name") String name, RecoveryCommand command) {
        if (command == null || command.command() == null) {
            return problem(400, "Missing command", "send {\"command\": \"rdma_ctl enable\"}");
        }
        return withFleet(fleet -> {
            SimulatedFleet.RecoveryOutput output = fleet.recoveryConsole(name, command.command());
            return Response.ok(Map.of("output", output.output(), "exitCode", output.exitCode(),
                    "power", fleet.machine(name).power().name().toLowerCase(java.util.Locale.ROOT))).build();
        });
    }

    private static Response withFleet(Function<SimulatedFleet, Response> action) {
        DemoEnvironment demo = DemoEnvironment.current();
        if (demo == null) {
            return problem(404, "Simulator not running", "the simulator control API exists only while `macfleet demo` runs");
        }
        try {
            return action.apply(demo.fleet());
        } catch (IllegalArgumentException e) {
            return problem(e.getMessage() != null && e.getMessage().startsWith("no simulated Mac") ? 404 : 400, "Invalid request", e.getMessage());
        } catch (IllegalStateException e) {
            return problem(409, "Not possible now", e.getMessage());
        }
    }

    private static Response problem(int status, String title, String detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "about:blank");
        body.put("title", title);
        body.put("status", status);
        body.put("detail", detail);
        return Response.status(status).type("application/problem+json").entity(body).build();
    }

    private static Map<String, Object> describe(SimulatedFleet fleet, SimulatedMac mac) {
        SimulatedMac.Snapshot state = mac.snapshot();
        SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", mac.name());
        body.put("address", endpoint.host());
        body.put("sshPort", endpoint.port());
        body.put("power", state.power().name().toLowerCase(java.util.Locale.ROOT));
        body.put("sshReachable", fleet.sshReachable(mac.name()));
        body.put("model", state.spec().modelIdentifier());
        body.put("memoryGb", state.spec().memoryGb());
        body.put("serialNumber", state.spec().serialNumber());
        body.put("macosVersion", state.release().version());
        body.put("macosBuild", state.release().build());
        body.put("rdmaEnabled", state.rdmaEnabled());
        body.put("bootstrapTokenEscrowed", state.bootstrapTokenEscrowed());
        body.put("thunderboltBridgeActive", state.thunderboltBridgeActive());
        body.put("faults", mac.faults().describe());
        body.put("daemons", mac.launchd().labels());
        return body;
    }

    private static Map<String, Object> describe(Cable cable) {
        return Map.of("a", cable.a().toString(), "b", cable.b().toString(), "speed", cable.speed().name(), "oneSided", cable.oneSided());
    }

}
