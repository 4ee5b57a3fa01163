package io.macfleet.console;

import io.macfleet.fleet.FleetStatus;
import io.macfleet.audit.AuditQuery;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.ssh.JdbcHostKeyStore;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Optional;

/** A machine's page: its status columns, facts, drift, Thunderbolt ports, cabling findings, host key, runs and audit entries. */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class MachineResource {

    private final FleetStatus fleetStatus;
    private final JdbcHostKeyStore hostKeys;
    private final JdbcAuditLog auditLog;
    private final ProvisioningService provisioning;
    private final ConsoleFrame frame;

    @Inject
    public MachineResource(FleetStatus fleetStatus, JdbcHostKeyStore hostKeys, JdbcAuditLog auditLog, ProvisioningService provisioning,
                           ConsoleFrame frame) {
        this.fleetStatus = fleetStatus;
        this.hostKeys = hostKeys;
        this.auditLog = auditLog;
        this.provisioning = provisioning;
        this.frame = frame;
    }

    @GET
    @Path("machines/{name}")
    public Response machine(@PathParam("name") String name) {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        if (fleet.machine(name).isEmpty()) {
            return frame.error(404, "Machine not found", "There is no machine named '" + name + "' in the applied inventory.",
                    "/console", "Back to the fleet overview");
        }
        Optional<Pages.Machine> page = MachinePage.machine(frame.layout(name, "overview"), fleet, name, hostKeys.find(name),
                auditLog.find(new AuditQuery(name, null, null, null, 15)), provisioning.runsOf(name, 10));
        return ConsoleSupport.page(200, Templates.machine(page.orElseThrow()));
    }
}
