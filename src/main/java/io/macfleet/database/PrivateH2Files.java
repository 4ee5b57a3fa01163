package io.macfleet.database;

import io.macfleet.secrets.SecretReference;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Base64;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Keeps an embedded H2 file database private to the user who runs macfleet. With AUTO_SERVER, H2 writes the TCP
 * port of its listener and a key into {@code NAME.lock.db}; anyone who can read that file and knows the
 * database password can connect. So: the database directory is 700 (created so, and a start is refused with a
 * clear message when it is open to others), its files are 600, and a database configured without a password gets
 * a generated one, kept in {@code NAME.password} (600) beside the database. An existing database that still has
 * the empty password is given the generated one on the first start after an upgrade.
 */
final class PrivateH2Files {

    static final String PASSWORD_FILE_SUFFIX = ".password";
    private static final Set<PosixFilePermission> GROUP_OR_OTHERS = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);
    private static final SecureRandom RANDOM = new SecureRandom();

    private PrivateH2Files() {
    }

    /**
     * The settings to open: unchanged for PostgreSQL and in-memory H2; for an H2 file database, its directory
     * checked (or created) private and, when no password is configured, the generated password's file as the
     * password reference.
     */
    static DatabaseSettings secure(DatabaseSettings settings) {
        Optional<Path> database = databaseFile(settings.url());
        if (database.isEmpty()) {
            return settings;
        }
        Path directory = database.get().toAbsolutePath().getParent();
        String name = database.get().getFileName().toString();
        try {
            privateDirectory(directory);
            tightenFiles(directory);
            if (settings.password() != null) {
                return settings;
            }
            Path passwordFile = directory.resolve(name + PASSWORD_FILE_SUFFIX);
            if (!Files.exists(passwordFile, LinkOption.NOFOLLOW_LINKS)) {
                generatePassword(settings, directory, name, passwordFile);
            }
            requirePrivate(passwordFile, "the database password file");
            return new DatabaseSettings(settings.url(), settings.user(), SecretReference.of("file:" + passwordFile));
        } catch (IOException e) {
            throw new DatabaseException("cannot prepare the database directory " + directory + ": " + e.getMessage(), e);
        }
    }

    /** The file an H2 URL names ({@code jdbc:h2:file:PATH} or {@code jdbc:h2:PATH}), empty for mem:, tcp: and the like. */
    static Optional<Path> databaseFile(String url) {
        if (!url.startsWith("jdbc:h2:")) {
            return Optional.empty();
        }
        String rest = url.substring("jdbc:h2:".length());
        int options = rest.indexOf(';');
        String location = options < 0 ? rest : rest.substring(0, options);
        if (location.startsWith("file:")) {
            location = location.substring("file:".length());
        } else if (location.matches("^[a-z]{2,}:.*")) {
            return Optional.empty();
        }
        if (location.isEmpty()) {
            return Optional.empty();
        }
        if (location.startsWith("~/")) {
            return Optional.of(Path.of(System.getProperty("user.home"), location.substring(2)));
        }
        return Optional.of(Path.of(location));
    }

    /** Creates the directory 700 (parents too, also 700), or refuses one that group or others can enter. */
    static void privateDirectory(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            Path parent = directory.getParent();
            if (parent != null && !Files.exists(parent)) {
                privateDirectory(parent);
            }
            try {
                Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (UnsupportedOperationException notPosix) {
                Files.createDirectory(directory);
            }
            // The umask may have taken bits away, never added any; set exactly 700 all the same.
            setPermissions(directory, "rwx------");
            return;
        }
        requirePrivate(directory, "the database directory");
    }

    /** Refuses a file or directory that group or others have any access to. */
    static void requirePrivate(Path path, String what) throws IOException {
        Optional<Set<PosixFilePermission>> permissions = permissions(path);
        if (permissions.isEmpty()) {
            return;
        }
        Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
        open.addAll(permissions.get());
        open.retainAll(GROUP_OR_OTHERS);
        if (!open.isEmpty()) {
            boolean directory = Files.isDirectory(path);
            throw new DatabaseException("refusing to start: " + what + " " + path + " is open to other users (mode "
                    + PosixFilePermissions.toString(permissions.get()) + "), who could read or take over the database; run `chmod "
                    + (directory ? "700" : "600") + " " + path + "` (and check who may have read it)", null);
        }
    }

    /** After the database is open: the files H2 has just created are made 600 too. */
    static void tightenFilesOf(DatabaseSettings settings) {
        databaseFile(settings.url()).map(file -> file.toAbsolutePath().getParent()).ifPresent(directory -> {
            try {
                tightenFiles(directory);
            } catch (IOException e) {
                throw new DatabaseException("cannot make the database files in " + directory + " private: " + e.getMessage(), e);
            }
        });
    }

    /**
     * H2 creates its files ({@code *.db}) with the process umask; inside a 700 directory they are private anyway,
     * but kept 600. Other files (the password file) are checked, not changed.
     */
    private static void tightenFiles(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.filter(path -> path.getFileName().toString().endsWith(".db") && Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)).toList()) {
                Optional<Set<PosixFilePermission>> permissions = permissions(file);
                if (permissions.isPresent() && permissions.get().stream().anyMatch(GROUP_OR_OTHERS::contains)) {
                    setPermissions(file, "rw-------");
                }
            }
        }
    }

    /**
     * Writes a new random password (600) and, when the database already exists with the empty password (made
     * before passwords were generated), sets it there first: the file appears only once the database takes it.
     */
    private static void generatePassword(DatabaseSettings settings, Path directory, String name, Path passwordFile) throws IOException {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        String password = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        Path pending = directory.resolve(name + PASSWORD_FILE_SUFFIX + ".new");
        io.macfleet.secrets.PrivateFiles.write(pending, password);
        if (Files.exists(directory.resolve(name + ".mv.db"))) {
            setPasswordOfExistingDatabase(settings, password);
        }
        try {
            Files.move(pending, passwordFile, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(pending, passwordFile);
        }
    }

    private static void setPasswordOfExistingDatabase(DatabaseSettings settings, String password) {
        try (Connection connection = DriverManager.getConnection(settings.url(), settings.user(), "");
                PreparedStatement statement = connection.prepareStatement("ALTER USER " + quotedUser(connection, settings.user()) + " SET PASSWORD ?")) {
            statement.setString(1, password);
            statement.execute();
        } catch (SQLException e) {
            throw new DatabaseException("the database " + settings.displayUrl() + " has a password but no "
                    + PASSWORD_FILE_SUFFIX + " file beside it; set macfleet.database.password to a reference to it (" + e.getMessage() + ")", e);
        }
    }

    /** The user as H2 stores it (unquoted names are upper case), quoted as an identifier. */
    private static String quotedUser(Connection connection, String user) throws SQLException {
        String stored = connection.getMetaData().storesUpperCaseIdentifiers() ? user.toUpperCase(java.util.Locale.ROOT) : user;
        return '"' + stored.replace("\"", "\"\"") + '"';
    }

    private static Optional<Set<PosixFilePermission>> permissions(Path path) throws IOException {
        try {
            return Optional.of(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
        } catch (UnsupportedOperationException notPosix) {
            return Optional.empty();
        }
    }

    private static void setPermissions(Path path, String permissions) throws IOException {
        try {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
        } catch (UnsupportedOperationException notPosix) {
            // Not a POSIX file system: its own access control applies.
        }
    }
}
