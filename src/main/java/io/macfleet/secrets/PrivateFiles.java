package io.macfleet.secrets;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** Files that hold a secret (a generated password, an API token): readable by their owner only from the moment they exist. */
public final class PrivateFiles {

    private PrivateFiles() {
    }

    /**
     * Replaces {@code file} with {@code text}, created with mode 600 (not created and then restricted, which would
     * leave a moment in which others could open it). On a file system without POSIX permissions the file is created
     * plainly.
     */
    public static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.deleteIfExists(file);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException notPosix) {
            Files.createFile(file);
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
