package io.macfleet.deployment;

import io.macfleet.secrets.ConfinedPath;
import java.nio.file.Path;
import java.util.List;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The directory on the control host that model files are deployed from (issue 29): a deploy copies the named file to
 * every Mac and shows its hash to viewers, so a path anywhere on the host (a password file, a key) must not be
 * deployable. A model must be a file under this directory, named without {@code ..} and not reached through a
 * symbolic link leading out of it (the secrets' rules, {@link ConfinedPath}). A path outside, a missing file and a
 * directory are refused with one and the same sentence, so the answer does not tell which of them a path is.
 * Setting: {@code macfleet.models.directory} (default {@code <macfleet.home>/models}).
 */
public record ModelsDirectory(Path directory) {

    public static final String SETTING = "macfleet.models.directory";

    public ModelsDirectory {
        directory = directory.toAbsolutePath().normalize();
    }

    /** The directory as configured (MicroProfile Config: system properties, environment, application.properties). */
    public static ModelsDirectory configured() {
        Config config = ConfigProvider.getConfig();
        return new ModelsDirectory(config.getOptionalValue(SETTING, String.class).filter(value -> !value.isBlank()).map(ModelsDirectory::expand)
                .orElseGet(() -> config.getOptionalValue("macfleet.home", String.class).map(ModelsDirectory::expand)
                        .orElse(Path.of(System.getProperty("user.home"), ".macfleet")).resolve("models")));
    }

    /**
     * The GGUF model file as given, when it is inside the directory; else the one refusal (a path outside, through a
     * link out, missing, a directory or not GGUF: the same sentence).
     */
    public Path requireGguf(Path model) {
        boolean gguf;
        try {
            NodeRelease.requireModel(model);
            gguf = true;
        } catch (IllegalArgumentException notGguf) {
            gguf = false;
        }
        if (!gguf || ConfinedPath.escape(model, List.of(directory)).isPresent()) {
            throw new IllegalArgumentException("model " + model + " is not a GGUF model file in the models directory " + directory
                    + " (" + SETTING + "): copy the model there and name it by that path");
        }
        return model;
    }

    /** A model path (a file or, for MLX, a directory) inside the directory; else the refusal, whether it exists or not. */
    public Path confine(Path model) {
        if (ConfinedPath.escape(model, List.of(directory)).isPresent()) {
            throw new IllegalArgumentException("model " + model + " is not in the models directory " + directory
                    + " (" + SETTING + "): copy the model there and name it by that path");
        }
        return model;
    }

    private static Path expand(String path) {
        return path.startsWith("~/") ? Path.of(System.getProperty("user.home"), path.substring(2)) : Path.of(path);
    }
}
