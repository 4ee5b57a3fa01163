package io.macfleet.secrets;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * Which secret references an inventory may use (issue 14): the service resolves them and sends their values to
 * the addresses the inventory names, so an unrestricted {@code file:/etc/shadow} or {@code env:PATH} would hand
 * any server secret to whoever may write the inventory. {@code file:} must name a file under one of the secret
 * directories (default: the state directory's {@code secrets/} and the user's {@code ~/.ssh}), without {@code ..}
 * and without a symbolic link leading out of them; {@code env:} must name a variable with the prefix (default
 * {@code MACFLEET_}). Settings: {@code macfleet.secrets.directories} (comma-separated) and
 * {@code macfleet.secrets.environment-prefix}.
 */
public record SecretPolicy(List<Path> directories, String environmentPrefix) {

    public static final String DEFAULT_ENVIRONMENT_PREFIX = "MACFLEET_";

    public SecretPolicy {
        directories = directories.stream().map(directory -> directory.toAbsolutePath().normalize()).toList();
    }

    /** The defaults for a state directory: its {@code secrets/} and {@code ~/.ssh}. */
    public static SecretPolicy defaults(Path home) {
        return new SecretPolicy(List.of(home.resolve("secrets"), Path.of(System.getProperty("user.home"), ".ssh")), DEFAULT_ENVIRONMENT_PREFIX);
    }

    /** The policy as configured (MicroProfile Config: system properties, environment, application.properties). */
    public static SecretPolicy configured() {
        Config config = ConfigProvider.getConfig();
        Path home = config.getOptionalValue("macfleet.home", String.class).map(SecretPolicy::expand)
                .orElse(Path.of(System.getProperty("user.home"), ".macfleet"));
        List<Path> directories = new ArrayList<>();
        config.getOptionalValue("macfleet.secrets.directories", String.class).ifPresent(list -> {
            for (String entry : list.split(",")) {
                if (!entry.isBlank()) {
                    directories.add(expand(entry.strip()));
                }
            }
        });
        SecretPolicy defaults = defaults(home);
        return new SecretPolicy(directories.isEmpty() ? defaults.directories() : directories,
                config.getOptionalValue("macfleet.secrets.environment-prefix", String.class).orElse(DEFAULT_ENVIRONMENT_PREFIX));
    }

    /** Why the reference is not allowed, or empty when it is. Checks the file's real path when it exists. */
    public Optional<String> problem(SecretReference reference) {
        return switch (reference.source()) {
            case ENV -> reference.name().startsWith(environmentPrefix) ? Optional.empty()
                    : Optional.of(reference + " is not allowed: secret environment variables must start with " + environmentPrefix
                            + " (macfleet.secrets.environment-prefix), so that PATH, HOME or the service's own settings cannot be sent to a machine");
            case FILE -> fileProblem(reference);
        };
    }

    private Optional<String> fileProblem(SecretReference reference) {
        String where = " is not allowed: secret files must be under " + String.join(" or ", directories.stream().map(Path::toString).toList())
                + " (macfleet.secrets.directories)";
        // The name as written (its '..' parts), then the path as resolved against the working directory.
        if (ConfinedPath.namesParent(Path.of(reference.name()))) {
            return Optional.of(reference + where + ", named without '..'");
        }
        Optional<ConfinedPath.Escape> escape = ConfinedPath.escape(reference.path(), directories);
        if (escape.isPresent()) {
            return Optional.of(switch (escape.get()) {
                case PARENT_REFERENCE -> reference + where + ", named without '..'";
                case OUTSIDE -> reference + where;
                case LINK_OUT -> reference + where + "; it is a symbolic link (or under one) leading out of them";
                case UNCHECKABLE -> reference + ": cannot check where it leads";
            });
        }
        return Optional.empty();
    }

    private static Path expand(String path) {
        return path.startsWith("~/") ? Path.of(System.getProperty("user.home"), path.substring(2)) : Path.of(path);
    }
}
