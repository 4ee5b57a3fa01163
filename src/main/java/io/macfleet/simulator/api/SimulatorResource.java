package io.macfleet.simulator.api;

import jakarta.annotation.security.RolesAllowed;

import io.macfleet.simulator.Cable;
import io.macfleet.simulator.FaultStep;
import io.macfleet.simulator.Faults;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.demo.DemoEnvironment;
import io.macfleet.demo.RunningDemo;
import jakarta.inject.Inject;
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
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/**
 * Control endpoint of the Mac Studio simulator. Answers only while `macfleet demo` runs (404 otherwise): list
 * machines and cables, inject faults, power, and type into a Mac's Recovery Terminal.
 */
@RolesAllowed(SimulatorResource.VIEWER)
@Path("/api/v1/simulator")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SimulatorResource {

    // The role names of accounts.Roles, spelled here: the simulator's own REST does not import product features.
    static final String VIEWER = "viewer";
    static final String OPERATOR = "operator";

    @Inject
    RunningDemo runningDemo;

    /** A command typed into Recovery's Terminal. */
    public record RecoveryCommand(String command) {
    }

    /** One simulated Mac: where its SSH server listens, its power and hardware, its macOS, its faults and launch daemons. */
    public record MachineBody(String name, String address, int sshPort, String power, boolean sshReachable, String model, int memoryGb,
                              String serialNumber, String macosVersion, String macosBuild, boolean rdmaEnabled, boolean bootstrapTokenEscrowed,
                              boolean thunderboltBridgeActive, Faults.FaultsSummary faults, List<String> daemons) {
    }

    /** One simulated Thunderbolt cable between two ports ({@code studio-01:3}), its speed, and whether only one end sees it. */
    public record CableBody(String a, String b, String speed, boolean oneSided) {
    }

    /** What a reset or an injected fault did, in words. */
    public record ResultBody(String result) {
    }

    /** What Recovery's Terminal printed, its exit code, and the Mac's power afterwards. */
    public record RecoveryOutputBody(String output, int exitCode, String power) {
    }

    @GET
    @Path("/machines")
    @APIResponse(responseCode = "200", description = "every simulated Mac",
            content = @Content(schema = @Schema(type = SchemaType.ARRAY, implementation = MachineBody.class)))
    public Response machines() {
        return withFleet(fleet -> Response.ok(fleet.machines().stream().map(mac -> describe(fleet, mac)).toList()).build());
    }

    @GET
    @Path("/machines/{name}")
    @APIResponse(responseCode = "200", description = "the simulated Mac", content = @Content(schema = @Schema(implementation = MachineBody.class)))
    public Response machine(@PathParam("name") String name) {
        return withFleet(fleet -> Response.ok(describe(fleet, fleet.machine(name))).build());
    }

    @GET
    @Path("/cables")
    @APIResponse(responseCode = "200", description = "every simulated cable",
            content = @Content(schema = @Schema(type = SchemaType.ARRAY, implementation = CableBody.class)))
    public Response cables() {
        return withFleet(fleet -> Response.ok(fleet.cabling().all().stream().map(SimulatorResource::describe).toList()).build());
    }

    @POST
    @RolesAllowed(OPERATOR)
    @Path("/reset")
    @APIResponse(responseCode = "200", description = "what the reset did", content = @Content(schema = @Schema(implementation = ResultBody.class)))
    public Response reset() {
        DemoEnvironment demo = runningDemo.current().orElse(null);
        if (demo == null) {
            return problem(404, "Simulator not running", "the simulator control API exists only while `macfleet demo` runs");
        }
        return Response.ok(new ResultBody(demo.reset())).build();
    }

    @POST
    @RolesAllowed(OPERATOR)
    @Path("/faults")
    @APIResponse(responseCode = "200", description = "what the fault did", content = @Content(schema = @Schema(implementation = ResultBody.class)))
    public Response fault(FaultStep step) {
        if (step == null) {
            return problem(400, "Missing fault", "send a JSON fault step, e.g. {\"machine\":\"studio-02\",\"fault\":\"hang\"}");
        }
        return withFleet(fleet -> Response.ok(new ResultBody(fleet.inject(step))).build());
    }

    @POST
    @RolesAllowed(OPERATOR)
    @Path("/machines/{name}/recovery")
    @APIResponse(responseCode = "200", description = "the Mac, now in Recovery", content = @Content(schema = @Schema(implementation = MachineBody.class)))
    public Response enterRecovery(@PathParam("name") String name) {
        return withFleet(fleet -> {
            fleet.enterRecovery(name);
            return Response.ok(describe(fleet, fleet.machine(name))).build();
        });
    }

    @POST
    @RolesAllowed(OPERATOR)
    @Path("/machines/{name}/recovery/commands")
    @APIResponse(responseCode = "200", description = "what Recovery's Terminal printed",
            content = @Content(schema = @Schema(implementation = RecoveryOutputBody.class)))
    public Response recoveryCommand(@PathParam("name") String name, RecoveryCommand command) {
        if (command == null || command.command() == null) {
            return problem(400, "Missing command", "send {\"command\": \"rdma_ctl enable\"}");
        }
        return withFleet(fleet -> {
            SimulatedFleet.RecoveryOutput output = fleet.recoveryConsole(name, command.command());
            return Response.ok(new RecoveryOutputBody(output.output(), output.exitCode(),
                    fleet.machine(name).power().name().toLowerCase(java.util.Locale.ROOT))).build();
        });
    }

    private Response withFleet(Function<SimulatedFleet, Response> action) {
        DemoEnvironment demo = runningDemo.current().orElse(null);
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

    private static MachineBody describe(SimulatedFleet fleet, SimulatedMac mac) {
        SimulatedMac.Snapshot state = mac.snapshot();
        SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
        return new MachineBody(mac.name(), endpoint.host(), endpoint.port(), state.power().name().toLowerCase(java.util.Locale.ROOT),
                fleet.sshReachable(mac.name()), state.spec().modelIdentifier(), state.spec().memoryGb(), state.spec().serialNumber(),
                state.release().version(), state.release().build(), state.rdmaEnabled(), state.bootstrapTokenEscrowed(),
                state.thunderboltBridgeActive(), mac.faults().describe(), mac.launchd().labels());
    }

    private static CableBody describe(Cable cable) {
        return new CableBody(cable.a().toString(), cable.b().toString(), cable.speed().name(), cable.oneSided());
    }

}
