package io.macfleet.database;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.resource.LoadableResource;

/**
 * Opens the connection pool (Agroal, configured here rather than through the Quarkus datasource extension
 * because the database kind must be chosen at run time from the URL) and migrates the schema with Flyway.
 */
public final class Database {

    static final String MIGRATIONS = "db/migration";
    private static final int MAXIMUM_POOL_SIZE = 8;

    private Database() {
    }

    /** A migrated pool; the caller closes it. */
    public static AgroalDataSource open(DatabaseSettings settings) {
        AgroalDataSource dataSource = pool(settings);
        try {
            migrate(dataSource);
            PrivateH2Files.tightenFilesOf(settings);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
        return dataSource;
    }

    static AgroalDataSource pool(DatabaseSettings requested) {
        DatabaseSettings settings = PrivateH2Files.secure(requested);
        // H2's AUTO_SERVER listener binds every interface unless told otherwise; sharing is for local processes only.
        if (System.getProperty("h2.bindAddress") == null) {
            System.setProperty("h2.bindAddress", "127.0.0.1");
        }
        String password = settings.password() == null ? "" : settings.password().resolve();
        Class<?> driver = settings.postgresql() ? org.postgresql.Driver.class : org.h2.Driver.class;
        AgroalDataSourceConfigurationSupplier configuration = new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(pool -> pool
                        .minSize(0)
                        .initialSize(0)
                        .maxSize(MAXIMUM_POOL_SIZE)
                        .acquisitionTimeout(Duration.ofSeconds(15))
                        .connectionFactoryConfiguration(factory -> factory
                                .jdbcUrl(settings.url())
                                .connectionProviderClass(driver)
                                .autoCommit(true)
                                .principal(new NamePrincipal(settings.user()))
                                .credential(new SimplePassword(password))));
        try {
            return AgroalDataSource.from(configuration);
        } catch (SQLException e) {
            throw new DatabaseException("cannot open the database " + settings.displayUrl() + ": " + e.getMessage(), e);
        }
    }

    /**
     * A PostgreSQL connection of its own, outside the pool, for session-bound state (advisory locks of
     * {@code io.macfleet.lease}); TCP keepalive lets a dead peer end the session rather than hang it.
     */
    public static java.sql.Connection unpooledPostgresqlSession(DatabaseSettings settings) throws SQLException {
        if (!settings.postgresql()) {
            throw new IllegalArgumentException("an unpooled session is for PostgreSQL, not " + settings.displayUrl());
        }
        java.util.Properties properties = new java.util.Properties();
        properties.setProperty("user", settings.user());
        properties.setProperty("password", settings.password() == null ? "" : settings.password().resolve());
        properties.setProperty("tcpKeepAlive", "true");
        properties.setProperty("ApplicationName", "macfleet leases");
        java.sql.Connection connection = new org.postgresql.Driver().connect(settings.url(), properties);
        if (connection == null) {
            throw new SQLException("the PostgreSQL driver does not accept " + settings.displayUrl());
        }
        return connection;
    }

    /** Applies the pending migrations of db/migration (every area's V*_*__*.sql). */
    public static void migrate(DataSource dataSource) {
        try {
            Flyway.configure(Database.class.getClassLoader())
                    .dataSource(dataSource)
                    .resourceProvider(new MigrationResources(migrationScripts()))
                    .load()
                    .migrate();
        } catch (RuntimeException e) {
            throw new DatabaseException("database migration failed: " + e.getMessage(), e);
        }
    }

    /**
     * The migration scripts, found by listing the directory (or jar) that holds db/migration. Flyway's own
     * class path scanning cannot list directories through the class loader of the packaged Quarkus
     * application, so the scripts are handed to it explicitly.
     */
    static Map<String, String> migrationScripts() {
        try {
            URL marker = Database.class.getClassLoader().getResource(MIGRATIONS + "/V1_1__desired_state.sql");
            if (marker == null) {
                throw new IllegalStateException(MIGRATIONS + " is missing from the class path");
            }
            URI uri = marker.toURI();
            if ("jar".equals(uri.getScheme())) {
                try (FileSystem jar = FileSystems.newFileSystem(uri, Map.of())) {
                    return read(jar.getPath("/" + MIGRATIONS));
                }
            }
            return read(Path.of(uri).getParent());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, String> read(Path directory) throws IOException {
        Map<String, String> scripts = new java.util.TreeMap<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.filter(path -> path.getFileName().toString().endsWith(".sql")).toList()) {
                scripts.put(file.getFileName().toString(), Files.readString(file, StandardCharsets.UTF_8));
            }
        }
        return scripts;
    }

    private static final class MigrationResources implements ResourceProvider {
        private final List<LoadableResource> resources = new ArrayList<>();

        MigrationResources(Map<String, String> scripts) {
            scripts.forEach((name, text) -> resources.add(new Script(name, text)));
        }

        @Override
        public LoadableResource getResource(String name) {
            return resources.stream().filter(resource -> resource.getFilename().equals(name)).findFirst().orElse(null);
        }

        @Override
        public java.util.Collection<LoadableResource> getResources(String prefix, String[] suffixes) {
            return resources.stream()
                    .filter(resource -> resource.getFilename().startsWith(prefix))
                    .filter(resource -> Stream.of(suffixes).anyMatch(resource.getFilename()::endsWith))
                    .toList();
        }
    }

    private static final class Script extends LoadableResource {
        private final String name;
        private final String text;

        Script(String name, String text) {
            this.name = name;
            this.text = text;
        }

        @Override
        public java.io.Reader read() {
            return new java.io.StringReader(text);
        }

        @Override
        public String getAbsolutePath() {
            return MIGRATIONS + "/" + name;
        }

        @Override
        public String getAbsolutePathOnDisk() {
            return getAbsolutePath();
        }

        @Override
        public String getFilename() {
            return name;
        }

        @Override
        public String getRelativePath() {
            return name;
        }
    }
}
