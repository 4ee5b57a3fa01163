package io.macfleet.secrets;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The rule for a file an operator names that must stay inside configured directories (secret files, model files):
 * named without {@code ..}, under one of the directories, and, when it exists, with a real path (symbolic links
 * followed) still under one of them. Shared so that secrets and models refuse the same escapes.
 */
public final class ConfinedPath {

    /** Why a path is not inside the directories. */
    public enum Escape {
        /** A {@code ..} component. */
        PARENT_REFERENCE,
        /** Not under any of the directories as written. */
        OUTSIDE,
        /** A symbolic link (or a directory that is one) leads out of them. */
        LINK_OUT,
        /** Its real path could not be read. */
        UNCHECKABLE
    }

    private ConfinedPath() {
    }

    /** Whether the path as written has a {@code ..} component. */
    public static boolean namesParent(Path path) {
        for (Path part : path) {
            if (part.toString().equals("..")) {
                return true;
            }
        }
        return false;
    }

    /** The escape of {@code path} (as the operator wrote it) from {@code directories}, or empty when it stays inside. */
    public static Optional<Escape> escape(Path path, List<Path> directories) {
        if (namesParent(path)) {
            return Optional.of(Escape.PARENT_REFERENCE);
        }
        Path absolute = path.toAbsolutePath().normalize();
        List<Path> normalized = directories.stream().map(directory -> directory.toAbsolutePath().normalize()).toList();
        if (normalized.stream().noneMatch(absolute::startsWith)) {
            return Optional.of(Escape.OUTSIDE);
        }
        if (Files.exists(absolute)) {
            try {
                Path real = absolute.toRealPath();
                for (Path directory : normalized) {
                    if (Files.exists(directory) && real.startsWith(directory.toRealPath())) {
                        return Optional.empty();
                    }
                }
                return Optional.of(Escape.LINK_OUT);
            } catch (IOException e) {
                return Optional.of(Escape.UNCHECKABLE);
            }
        }
        return Optional.empty();
    }
}
