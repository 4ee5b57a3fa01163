package io.macfleet.inventory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The example inventory the jar carries (examples/inventory): 4 Mac Studio M3 Ultra in one cluster. */
public final class ExampleInventory {

    public static final List<String> FILES = List.of("fleet.yaml", "clusters.yaml", "machines.yaml");

    private ExampleInventory() {
    }

    /** Writes the example's files into the directory (created if missing); existing files are not overwritten. */
    public static List<Path> writeTo(Path directory, boolean overwrite) throws IOException {
        Files.createDirectories(directory);
        List<Path> conflicts = FILES.stream().map(directory::resolve).filter(Files::exists).toList();
        if (!overwrite && !conflicts.isEmpty()) {
            throw new java.nio.file.FileAlreadyExistsException(conflicts.getFirst().toString(), null,
                    "already exists; expected an empty directory (or --force)");
        }
        List<Path> written = new ArrayList<>();
        for (String name : FILES) {
            try (InputStream in = ExampleInventory.class.getClassLoader().getResourceAsStream("examples/inventory/" + name)) {
                if (in == null) {
                    throw new UncheckedIOException(new IOException("examples/inventory/" + name + " is missing from the jar"));
                }
                Path file = directory.resolve(name);
                Files.write(file, in.readAllBytes());
                written.add(file);
            }
        }
        return written;
    }
}
