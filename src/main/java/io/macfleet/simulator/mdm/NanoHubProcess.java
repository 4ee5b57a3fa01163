package io.macfleet.simulator.mdm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A real NanoHUB server (micromdm/nanohub's static binary) on a free loopback port, as its README says to run it for
 * tests: {@code -ca} with the CA that issued the simulated Macs' identity certificates, check-ins on {@code /checkin}
 * ({@code -checkin}), the device certificate in {@link #CERTIFICATE_HEADER} ({@code -cert-header}), no NanoCMD worker.
 * There is no APNs: a push certificate is never uploaded, so whatever NanoHUB tries to push fails (and is reported).
 * The API key is passed in the environment ({@code NANOHUB_API_KEY}), not as an argument other local users could read.
 */
public final class NanoHubProcess implements AutoCloseable {
    public static final String CERTIFICATE_HEADER = "X-Client-Cert";

    private final Process process;
    private final URI url;
    private final Path log;

    private NanoHubProcess(Process process, URI url, Path log) {
        this.process = process;
        this.url = url;
        this.log = log;
    }

    /**
     * @param storage    {@code file} (under {@code directory/db}) or {@code mysql}
     * @param storageDsn the MySQL DSN ({@code user@tcp(127.0.0.1:PORT)/db}); ignored for file storage
     */
    public static NanoHubProcess start(Path binary, Path directory, String apiKey, MdmCertificateAuthority authority, String storage, String storageDsn) {
        try {
            Files.createDirectories(directory);
            Path ca = directory.resolve("ca.pem");
            Files.writeString(ca, authority.pem());
            Path log = directory.resolve("nanohub.log");
            IOException last = null;
            for (int attempt = 0; attempt < 3; attempt++) {
                int port;
                try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                    port = socket.getLocalPort();
                }
                List<String> command = new ArrayList<>(List.of(binary.toString(), "-listen", "127.0.0.1:" + port, "-storage", storage,
                        "-ca", ca.toString(), "-cert-header", CERTIFICATE_HEADER, "-checkin", "-worker-interval", "0"));
                command.addAll(List.of("-storage-dsn", storage.equals("file") ? directory.resolve("db").toString() : storageDsn));
                ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
                builder.environment().put("NANOHUB_API_KEY", apiKey);
                Process process = builder.start();
                URI url = URI.create("http://127.0.0.1:" + port);
                NanoHubProcess server = new NanoHubProcess(process, url, log);
                if (server.awaitVersion(Duration.ofSeconds(20))) {
                    return server;
                }
                server.close();
                last = new IOException("NanoHUB did not answer GET /version on " + url + ": " + server.logTail());
            }
            throw new UncheckedIOException(last);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start NanoHUB " + binary + ": " + e.getMessage(), e);
        }
    }

    private boolean awaitVersion(Duration patience) {
        Instant until = Instant.now().plus(patience);
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build()) {
            while (Instant.now().isBefore(until) && process.isAlive()) {
                try {
                    HttpResponse<String> answer = http.send(HttpRequest.newBuilder(url.resolve("/version")).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (answer.statusCode() == 200 && answer.body().contains("version")) {
                        return true;
                    }
                } catch (IOException e) {
                    // not listening yet
                }
                Thread.sleep(100);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** The API root, e.g. {@code http://127.0.0.1:PORT}. */
    public URI url() {
        return url;
    }

    /** The enrollment profile's ServerURL. */
    public URI serverUrl() {
        return url.resolve("/mdm");
    }

    /** The enrollment profile's CheckInURL ({@code -checkin}). */
    public URI checkInUrl() {
        return url.resolve("/checkin");
    }

    /** The server's process id (tests stop and continue it to make a server that does not answer). */
    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** The last lines of NanoHUB's log (logfmt), for failure messages. */
    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** NanoHUB has no graceful shutdown; SIGTERM ends it at once. */
    @Override
    public void close() {
        process.destroy();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
