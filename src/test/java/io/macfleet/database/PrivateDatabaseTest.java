package io.macfleet.database;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agroal.api.AgroalDataSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded database cannot be taken over by another local user (issue 14, item 1). */
class PrivateDatabaseTest {

    @TempDir
    Path home;

    private String url() {
        return "jdbc:h2:file:" + home.resolve("db").resolve("macfleet") + ";AUTO_SERVER=TRUE";
    }

    @Test
    void aSecondProcessWithoutThePasswordFileCannotConnectWhileTheServiceRuns() throws Exception {
        try (AgroalDataSource dataSource = Database.open(new DatabaseSettings(url(), "macfleet", null));
                Connection connection = dataSource.getConnection()) {
            assertThat(connection.isValid(5)).isTrue();
            Path db = home.resolve("db");
            assertThat(mode(db)).isEqualTo("rwx------");
            Path passwordFile = db.resolve("macfleet.password");
            assertThat(mode(passwordFile)).isEqualTo("rw-------");
            assertThat(Files.readString(passwordFile).length()).isGreaterThanOrEqualTo(40);
            try (var files = Files.list(db)) {
                assertThat(files.filter(Files::isRegularFile).map(PrivateDatabaseTest::mode)).allMatch("rw-------"::equals);
            }

            // What the attacker of the issue did: the AUTO_SERVER URL, user macfleet, the empty password.
            Attempt empty = attempt(url(), "macfleet", "");
            assertThat(empty.exitCode()).as(empty.output()).isEqualTo(3);
            assertThat(empty.output()).contains("refused");
            Attempt guessed = attempt(url(), "sa", "");
            assertThat(guessed.exitCode()).as(guessed.output()).isEqualTo(3);

            // The same user's own CLI (which can read the 600 file) still gets in, through the running service.
            Attempt owner = attempt(url(), "macfleet", Files.readString(passwordFile));
            assertThat(owner.exitCode()).as(owner.output()).isZero();
        }
    }

    @Test
    void aDatabaseDirectoryOpenToOthersIsRefusedWithTheFix() throws IOException {
        Path db = Files.createDirectories(home.resolve("db"));
        Files.setPosixFilePermissions(db, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThatThrownBy(() -> Database.open(new DatabaseSettings(url(), "macfleet", null)))
                .isInstanceOf(DatabaseException.class)
                .hasMessageContaining("refusing to start")
                .hasMessageContaining("open to other users")
                .hasMessageContaining("chmod 700 " + db);
    }

    @Test
    void aPasswordFileReadableByOthersIsRefused() throws IOException {
        Database.open(new DatabaseSettings(url(), "macfleet", null)).close();
        Path passwordFile = home.resolve("db").resolve("macfleet.password");
        Files.setPosixFilePermissions(passwordFile, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> Database.open(new DatabaseSettings(url(), "macfleet", null)))
                .isInstanceOf(DatabaseException.class)
                .hasMessageContaining("chmod 600 " + passwordFile);
    }

    @Test
    void aDatabaseMadeBeforeWithTheEmptyPasswordGetsTheGeneratedOne() throws Exception {
        Path db = Files.createDirectories(home.resolve("db"));
        Files.setPosixFilePermissions(db, PosixFilePermissions.fromString("rwx------"));
        String plain = "jdbc:h2:file:" + db.resolve("macfleet");
        try (Connection connection = DriverManager.getConnection(plain, "macfleet", "")) {
            connection.createStatement().execute("create schema earlier");
            connection.createStatement().execute("create table earlier.kept (word varchar(10))");
            connection.createStatement().execute("insert into earlier.kept values ('yes')");
        }
        try (AgroalDataSource dataSource = Database.open(new DatabaseSettings(url(), "macfleet", null));
                Connection connection = dataSource.getConnection();
                ResultSet rows = connection.createStatement().executeQuery("select word from earlier.kept")) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getString(1)).isEqualTo("yes");
        }
        Attempt empty = attempt(plain, "macfleet", "");
        assertThat(empty.exitCode()).as(empty.output()).isEqualTo(3);
        assertThat(mode(db.resolve("macfleet.mv.db"))).isEqualTo("rw-------");
    }

    @Test
    void serveWarnsAboutAStateDirectoryReadableByOthers() throws IOException {
        Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThat(StateDirectory.exposureWarning(home)).hasValueSatisfying(warning -> assertThat(warning).contains("chmod 700 " + home));
        Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwx------"));
        assertThat(StateDirectory.exposureWarning(home)).isEmpty();
    }

    @Test
    void onlyH2FileUrlsNameAFile() {
        assertThat(PrivateH2Files.databaseFile("jdbc:h2:mem:x;DB_CLOSE_DELAY=-1")).isEmpty();
        assertThat(PrivateH2Files.databaseFile("jdbc:h2:tcp://localhost/x")).isEmpty();
        assertThat(PrivateH2Files.databaseFile("jdbc:postgresql://h/db")).isEmpty();
        assertThat(PrivateH2Files.databaseFile("jdbc:h2:file:/a/b;AUTO_SERVER=TRUE")).hasValue(Path.of("/a/b"));
        assertThat(PrivateH2Files.databaseFile("jdbc:h2:/a/b")).hasValue(Path.of("/a/b"));
    }

    private record Attempt(int exitCode, String output) {
    }

    private static Attempt attempt(String url, String user, String password) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process process = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                ConnectAttempt.class.getName(), url, user, password).redirectErrorStream(true).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Attempt(process.exitValue(), new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    private static String mode(Path path) {
        try {
            return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
