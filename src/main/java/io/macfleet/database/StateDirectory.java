package io.macfleet.database;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;

/**
 * The state directory (macfleet.home: the database, the demo's password and token files, secrets/) should be
 * private to the user. The database directory inside it is enforced (see {@link PrivateH2Files}); the state
 * directory itself is only warned about by `macfleet serve`, because users may have arranged it on purpose.
 */
public final class StateDirectory {

    private StateDirectory() {
    }

    /** A warning to print when group or others can list or enter the directory, else empty. */
    public static Optional<String> exposureWarning(Path directory) {
        try {
            if (!Files.isDirectory(directory)) {
                return Optional.empty();
            }
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(directory, LinkOption.NOFOLLOW_LINKS);
            boolean open = permissions.stream().anyMatch(permission -> permission.name().startsWith("GROUP_") || permission.name().startsWith("OTHERS_"));
            if (!open) {
                return Optional.empty();
            }
            return Optional.of("the state directory " + directory.toAbsolutePath() + " is readable by other users (mode "
                    + PosixFilePermissions.toString(permissions) + "); run `chmod 700 " + directory.toAbsolutePath() + "`");
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }
}
