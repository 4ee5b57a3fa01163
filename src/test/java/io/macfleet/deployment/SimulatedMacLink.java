package io.macfleet.deployment;

import io.macfleet.simulator.SimulatedFleet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.sftp.SFTPClient;
import net.schmizz.sshj.transport.verification.PromiscuousVerifier;
import net.schmizz.sshj.userauth.keyprovider.KeyPairWrapper;

/** A bare SSHJ connection to one simulated Mac (tests only: any host key accepted): an SFTP client and a shell. */
final class SimulatedMacLink implements AutoCloseable {

    final SSHClient client;
    final SFTPClient sftp;

    SimulatedMacLink(SimulatedFleet fleet, String machine, KeyPair key) throws IOException {
        this(fleet, machine, key, new DefaultConfig());
    }

    SimulatedMacLink(SimulatedFleet fleet, String machine, KeyPair key, net.schmizz.sshj.Config config) throws IOException {
        SimulatedFleet.Endpoint endpoint = fleet.endpoint(machine);
        client = new SSHClient(config);
        client.addHostKeyVerifier(new PromiscuousVerifier());
        client.connect(endpoint.host(), endpoint.port());
        client.authPublickey(fleet.sshUser(), new KeyPairWrapper(key));
        sftp = client.newSFTPClient();
    }

    RemoteShell shell() {
        return commandLine -> {
            try (Session session = client.startSession()) {
                Session.Command command = session.exec(commandLine);
                String stdout = new String(command.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                String stderr = new String(command.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                command.join(60, TimeUnit.SECONDS);
                Integer exit = command.getExitStatus();
                return new RemoteShell.Answer(exit == null ? -1 : exit, stdout, stderr);
            }
        };
    }

    @Override
    public void close() throws IOException {
        client.disconnect();
    }
}
