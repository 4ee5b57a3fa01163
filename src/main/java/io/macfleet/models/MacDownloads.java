package io.macfleet.models;

import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.reach.MachineReach;
import io.macfleet.secrets.SecretReference;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshException;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTransport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * {@code model add ... --via MACHINE} (CLI and REST): resolves the machine in the applied inventory, connects to it over
 * SSH and lets {@link ModelCatalogue#addVia} run {@link MacHubDownload} there.
 */
@ApplicationScoped
public class MacDownloads {

    private DesiredStateStore desiredState;
    private ModelCatalogue catalogue;
    private JdbcHostKeyStore hostKeys;
    private JdbcAuditLog audit;

    protected MacDownloads() {
    }

    @Inject
    public MacDownloads(DesiredStateStore desiredState, ModelCatalogue catalogue, JdbcHostKeyStore hostKeys, JdbcAuditLog audit) {
        this.desiredState = desiredState;
        this.catalogue = catalogue;
        this.hostKeys = hostKeys;
        this.audit = audit;
    }

    public CatalogueModel add(String name, String source, Optional<String> include, Optional<SecretReference> token, String machineName,
                              SshSettings ssh, HuggingFaceHub.Progress progress) {
        Machine machine = desiredState.machine(machineName).orElseThrow(() -> new ModelRefused(
                "--via " + machineName + ": no machine named '" + machineName + "' in the applied inventory"));
        return catalogue.addVia(name, source, include, token, ssh.actor(), machine.name(), (plan, secret, sketch) -> {
            try (SshRun run = new SshTransport(ssh, hostKeys, audit, Clock.systemUTC()).openRun()) {
                MachineResult<MacHubDownload.Result> result = run.onFleet(List.of(MachineReach.of(machine).ssh()),
                        mac -> MacHubDownload.download(mac, name, plan, secret, sketch, progress)).getFirst();
                if (result.error() instanceof ModelRefused refused) {
                    throw refused;
                }
                if (result.error() != null) {
                    Throwable cause = result.error();
                    while (cause.getCause() != null && !(cause instanceof SshException)) {
                        cause = cause.getCause();
                    }
                    throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, "downloading " + source + " on " + machine.name() + " failed: "
                            + (cause.getMessage() == null ? cause.toString() : cause.getMessage()));
                }
                return result.value();
            }
        });
    }
}
