package io.macfleet.simulator;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.transport.verification.PromiscuousVerifier;
import net.schmizz.sshj.userauth.keyprovider.KeyPairWrapper;

/** A real SSH client (SSHJ) for the tests: one connection per call keeps each test's view simple. */
final class SshClient {
    record Answer(String stdout, String stderr, Integer exitCode) {
    }

    private SshClient() {
    }

    static SSHClient connect(SimulatedFleet.Endpoint endpoint, String user, KeyPair key) throws IOException {
        SSHClient client = new SSHClient(new DefaultConfig());
        client.addHostKeyVerifier(new PromiscuousVerifier());
        client.setConnectTimeout(5000);
        client.setTimeout(10000);
        client.connect(endpoint.host(), endpoint.port());
        try {
            client.authPublickey(user, new KeyPairWrapper(key));
        } catch (IllegalStateException closed) {
            // SSHJ says "Not connected" when the machine drops the connection between the handshake and the
            // authentication (a simulated Mac going down for its reboot): that is an unreachable machine, as an IOException is.
            client.close();
            throw new IOException(endpoint.host() + ":" + endpoint.port() + " closed the connection before authentication", closed);
        }
        return client;
    }

    static Answer exec(SimulatedFleet fleet, String machine, KeyPair key, String command) throws IOException {
        try (SSHClient client = connect(fleet.endpoint(machine), fleet.sshUser(), key)) {
            return exec(client, command, null);
        }
    }

    static Answer exec(SSHClient client, String command, String stdin) throws IOException {
        try (Session session = client.startSession()) {
            Session.Command running = session.exec(command);
            if (stdin != null) {
                try {
                    running.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
                    running.getOutputStream().flush();
                } catch (net.schmizz.sshj.connection.ConnectionException closedBeforeRead) {
                    // The command ended without reading its standard input (as a refusal does) and the server closed
                    // the channel first; OpenSSH's client ignores that too. Its output and exit status still count.
                }
            }
            String out = read(running.getInputStream());
            String err = read(running.getErrorStream());
            running.join(10, TimeUnit.SECONDS);
            return new Answer(out, err, running.getExitStatus());
        }
    }

    static void upload(SimulatedFleet fleet, KeyPair key, String machine, String path, String content) throws IOException {
        try (SSHClient client = connect(fleet.endpoint(machine), fleet.sshUser(), key);
             net.schmizz.sshj.sftp.SFTPClient sftp = client.newSFTPClient()) {
            byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
            sftp.put(new net.schmizz.sshj.xfer.InMemorySourceFile() {
                @Override
                public String getName() {
                    return java.nio.file.Path.of(path).getFileName().toString();
                }

                @Override
                public long getLength() {
                    return bytes.length;
                }

                @Override
                public InputStream getInputStream() {
                    return new java.io.ByteArrayInputStream(bytes);
                }
            }, path);
        }
    }

    private static String read(InputStream in) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        in.transferTo(buffer);
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
