package io.macfleet.secrets;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a secret lives: an environment variable ({@code env:NAME}) or a file ({@code file:PATH}, a leading
 * {@code ~/} is the user's home). The inventory only ever holds such references, never the secret itself,
 * and {@link #toString()} shows the reference, never the value, so logging a reference is safe.
 */
public record SecretReference(Source source, String name) {

    public enum Source { ENV, FILE }

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    public SecretReference {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(name, "name");
    }

    /** True when the text has the form of a reference ({@code env:NAME} or {@code file:PATH}). */
    public static boolean isReference(String text) {
        return parse(text).isPresent();
    }

    public static Optional<SecretReference> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        if (text.startsWith("env:") && ENV_NAME.matcher(text.substring(4)).matches()) {
            return Optional.of(new SecretReference(Source.ENV, text.substring(4)));
        }
        if (text.startsWith("file:") && text.length() > 5 && text.indexOf('\n') < 0) {
            return Optional.of(new SecretReference(Source.FILE, text.substring(5)));
        }
        return Optional.empty();
    }

    /** Parses a reference or explains what is expected. */
    public static SecretReference of(String text) {
        return parse(text).orElseThrow(() -> new IllegalArgumentException(
                "expected a secret reference 'env:NAME' or 'file:PATH', never the secret itself"));
    }

    /** The file a {@code file:} reference names, with {@code ~/} expanded. */
    public Path path() {
        if (source != Source.FILE) {
            throw new IllegalStateException(this + " is not a file reference");
        }
        if (name.startsWith("~/")) {
            return Path.of(System.getProperty("user.home"), name.substring(2));
        }
        return Path.of(name);
    }

    /**
     * Reads a secret of the service's own configuration (the database password) from the process environment or
     * the file system. The operator of the host chose it, so the {@link SecretPolicy} for inventories does not apply.
     */
    public String resolve() {
        return read(System.getenv());
    }

    /**
     * Reads a secret named by an inventory, after checking it against the configured {@link SecretPolicy} (again at
     * use: a stored inventory may predate the policy, and a file may have become a symbolic link since).
     */
    public String resolve(Map<String, String> environment) {
        SecretPolicy.configured().problem(this).ifPresent(problem -> {
            throw new SecretUnavailableException(problem);
        });
        return read(environment);
    }

    private String read(Map<String, String> environment) {
        return switch (source) {
            case ENV -> {
                String value = environment.get(name);
                if (value == null || value.isEmpty()) {
                    throw new SecretUnavailableException(this + ": environment variable " + name + " is not set");
                }
                yield value;
            }
            case FILE -> {
                Path path = path();
                try {
                    yield Files.readString(path, StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new SecretUnavailableException(this + ": cannot read " + path + " (" + e.getClass().getSimpleName() + ")");
                }
            }
        };
    }

    @Override
    public String toString() {
        return (source == Source.ENV ? "env:" : "file:") + name;
    }
}
