package io.macfleet.mdm.real;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A throwaway MariaDB server from Debian's {@code mariadb-server} (what NanoHUB's {@code -storage mysql} runs on in
 * production is MySQL or MariaDB), started as {@code PostgresServer} starts PostgreSQL: {@code mariadb-install-db}
 * into a temporary directory and {@code mariadbd} on a free loopback port, as the {@code mysql} user when run as root.
 * It runs with {@code --skip-grant-tables} (any local client is root): it lives for one test class on 127.0.0.1 and
 * holds nothing but test data. NanoHUB creates no tables itself, so {@link #nanoHubDatabase} loads the schemas of
 * NanoMDM, KMFDDM and NanoCMD from NanoHUB's vendored source, as its operations guide says to.
 * Without the binaries the test is skipped, or fails with CI=true.
 */
public final class MariaDbServer implements AutoCloseable {
    private static final Path SERVER = Path.of("/usr/sbin/mariadbd");
    private static final Path INSTALL = Path.of("/usr/bin/mariadb-install-db");
    private static final Path CLIENT = Path.of("/usr/bin/mariadb");

    private final Process process;
    private final Path directory;
    private final int port;

    private MariaDbServer(Process process, Path directory, int port) {
        this.process = process;
        this.directory = directory;
        this.port = port;
    }

    public static MariaDbServer start() throws IOException, InterruptedException {
        if (!Files.isExecutable(SERVER) || !Files.isExecutable(INSTALL) || !Files.isExecutable(CLIENT)) {
            String reason = "MariaDB not found (" + SERVER + ", " + INSTALL + ", " + CLIENT + "; apt-get install -y mariadb-server)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(reason + "; CI=true requires it");
            }
            Assumptions.abort(reason + "; skipping the MySQL-storage test");
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        Path directory = Files.createTempDirectory("macfleet-mariadb");
        List<String> user = root ? List.of("--user=mysql") : List.of();
        if (root) {
            run(List.of("chown", "mysql:mysql", directory.toString()));
        }
        List<String> install = new ArrayList<>(List.of(INSTALL.toString(), "--no-defaults", "--datadir=" + directory.resolve("data"),
                "--auth-root-authentication-method=normal", "--skip-test-db"));
        install.addAll(user);
        run(install);
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        List<String> command = new ArrayList<>(List.of(SERVER.toString(), "--no-defaults", "--datadir=" + directory.resolve("data"),
                "--socket=" + directory.resolve("socket"), "--port=" + port, "--bind-address=127.0.0.1", "--skip-grant-tables",
                "--skip-name-resolve", "--pid-file=" + directory.resolve("pid"), "--log-error=" + directory.resolve("error.log"),
                "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M", "--skip-log-bin", "--innodb-flush-log-at-trx-commit=0"));
        command.addAll(user);
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("server.out").toFile())).start();
        MariaDbServer server = new MariaDbServer(process, directory, port);
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < end) {
                if (!process.isAlive()) {
                    throw new IOException("mariadbd exited with " + process.exitValue() + ": " + server.errorLog());
                }
                if (server.sql(null, "SELECT 1").exit == 0) {
                    return server;
                }
                Thread.sleep(200);
            }
            throw new IOException("mariadbd did not answer within 60 s: " + server.errorLog());
        } catch (IOException | InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /**
     * A new database with the schemas NanoHUB's MySQL storage needs (read from {@code src/vendor/...} next to the
     * binary), and the DSN for {@code -storage-dsn}.
     */
    public String nanoHubDatabase(Path nanoHubSource, String name) throws IOException, InterruptedException {
        check(sql(null, "CREATE DATABASE " + name));
        Path vendor = nanoHubSource.resolve("vendor/github.com");
        for (String schema : List.of("micromdm/nanomdm/storage/mysql/schema.sql", "jessepeterson/kmfddm/storage/mysql/schema.sql",
                "micromdm/nanocmd/engine/storage/mysql/schema.sql", "micromdm/nanocmd/subsystem/profile/storage/mysql/schema.sql")) {
            check(sql(name, Files.readString(vendor.resolve(schema))));
        }
        return "root@tcp(127.0.0.1:" + port + ")/" + name;
    }

    /** Runs SQL through the mariadb client over the socket. */
    public Result sql(String database, String statements) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(CLIENT.toString(), "--no-defaults", "--socket=" + directory.resolve("socket"), "-u", "root", "-N", "-B"));
        if (database != null) {
            command.add(database);
        }
        Process client = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (var input = client.getOutputStream()) {
            input.write(statements.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (IOException e) {
            // The client exits at once while the server is not up yet (broken pipe): its exit code and output say why.
        }
        String output = new String(client.getInputStream().readAllBytes());
        if (!client.waitFor(60, TimeUnit.SECONDS)) {
            client.destroyForcibly();
            return new Result(-1, "timed out");
        }
        return new Result(client.exitValue(), output);
    }

    public record Result(int exit, String output) {
    }

    private static void check(Result result) throws IOException {
        if (result.exit != 0) {
            throw new IOException("mariadb client failed (" + result.exit + "): " + result.output);
        }
    }

    private String errorLog() {
        try {
            return Files.readString(directory.resolve("error.log"));
        } catch (IOException e) {
            return "(no error log)";
        }
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IOException(command + " failed:\n" + output);
        }
    }

    @Override
    public void close() throws IOException {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }
}
