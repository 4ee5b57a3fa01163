package io.macfleet.database;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A throwaway PostgreSQL server from Debian's binaries (/usr/lib/postgresql/N/bin): initdb into a temporary
 * directory and postgres on a free loopback port. initdb refuses to run as root, so as root the server runs
 * as the postgres OS user. Without the binaries the test fails on CI (CI=true) and is skipped elsewhere.
 */
public final class PostgresServer implements AutoCloseable {

    private final Path binaries;
    private final Path directory;
    private final int port;
    private final boolean asPostgresUser;

    private PostgresServer(Path binaries, Path directory, int port, boolean asPostgresUser) {
        this.binaries = binaries;
        this.directory = directory;
        this.port = port;
        this.asPostgresUser = asPostgresUser;
    }

    /**
     * One server for a test class, started before its first test and stopped after its last:
     * {@code @RegisterExtension static final PostgresServer.PerClass postgres = new PostgresServer.PerClass();}, then
     * {@code postgres.server()} and {@code postgres.settings()} (the superuser, no password) in the tests.
     */
    public static final class PerClass implements org.junit.jupiter.api.extension.BeforeAllCallback,
            org.junit.jupiter.api.extension.AfterAllCallback {
        private PostgresServer server;

        @Override
        public void beforeAll(org.junit.jupiter.api.extension.ExtensionContext context) throws Exception {
            server = start();
        }

        @Override
        public void afterAll(org.junit.jupiter.api.extension.ExtensionContext context) throws Exception {
            if (server != null) {
                server.close();
                server = null;
            }
        }

        public PostgresServer server() {
            if (server == null) {
                throw new IllegalStateException("the PostgreSQL server is not running (register PerClass as a static @RegisterExtension)");
            }
            return server;
        }

        public DatabaseSettings settings() {
            return new DatabaseSettings(server().url(), "postgres", null);
        }
    }

    public static PostgresServer start() throws IOException, InterruptedException {
        Optional<Path> binaries = findBinaries();
        if (binaries.isEmpty()) {
            String reason = "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin (apt-get install -y postgresql)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(reason + "; CI=true requires them");
            }
            Assumptions.abort(reason + "; skipping the PostgreSQL test");
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        Path directory = Files.createTempDirectory("macfleet-postgres");
        if (root) {
            run(List.of("chown", "postgres:postgres", directory.toString()), false);
        }
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        PostgresServer server = new PostgresServer(binaries.get(), directory, port, root);
        server.command("initdb", "-D", directory.resolve("data").toString(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8");
        server.command("pg_ctl", "-D", directory.resolve("data").toString(), "-w", "-t", "60", "-l", directory.resolve("log").toString(),
                "-o", "-p " + port + " -c listen_addresses=127.0.0.1 -k " + directory + " -F", "start");
        return server;
    }

    /**
     * A new, empty database on this server, opened (and so migrated) through macfleet's own {@link Database#open}:
     * each test gets its own schema. The caller closes it.
     */
    public io.agroal.api.AgroalDataSource database(String name) {
        try (io.agroal.api.AgroalDataSource admin = Database.pool(new DatabaseSettings(url(), "postgres", null))) {
            Jdbc.withConnection(admin, connection -> connection.createStatement().execute("create database " + name));
        }
        return Database.open(new DatabaseSettings(url().replace("/postgres", "/" + name), "postgres", null));
    }

    /** A new in-memory H2 database, opened and migrated the same way: the same statements on both engines. */
    public static io.agroal.api.AgroalDataSource h2(String name) {
        return Database.open(new DatabaseSettings("jdbc:h2:mem:" + name + "-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1", "sa", null));
    }

    public String url() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    private void command(String program, String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        if (asPostgresUser) {
            command.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        command.add(binaries.resolve(program).toString());
        command.addAll(List.of(arguments));
        run(command, true);
    }

    private static void run(List<String> command, boolean check) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(90, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(command + " timed out");
        }
        if (check && process.exitValue() != 0) {
            throw new IOException(command + " failed with exit " + process.exitValue() + ":\n" + output);
        }
    }

    private static Optional<Path> findBinaries() throws IOException {
        Path root = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(root)) {
            return versions.map(version -> version.resolve("bin"))
                    .filter(bin -> Files.isExecutable(bin.resolve("initdb")) && Files.isExecutable(bin.resolve("pg_ctl")))
                    .max(Comparator.comparing(Path::toString));
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        try {
            command("pg_ctl", "-D", directory.resolve("data").toString(), "-m", "immediate", "-w", "stop");
        } finally {
            try (Stream<Path> files = Files.walk(directory)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }
}
