package io.macfleet.models;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.config.MacfleetConfig;
import io.macfleet.secrets.SecretReference;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * The model catalogue: models by name, and where each verified file lies on the control host
 * ({@code <macfleet.home>/models/<name>/<path>}). A model is added from a local GGUF file (or the first of its split
 * parts), an MLX directory, or {@code hf:ORG/REPOSITORY@REVISION}; its bytes are copied (or downloaded) into a staging
 * directory, hashed on the way, and the whole directory is renamed into place before the row is written, so a name in
 * the catalogue always has all its files, verified.
 */
@ApplicationScoped
public class ModelCatalogue {

    /** A model name: a directory name and an inventory value, without slashes (which would read as a path). */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");
    private static final String STAGING = ".staging";
    private static final String DOWNLOADS = ".downloads";

    private CatalogueStore store;
    private Path root;
    private AuditLog audit;
    private Clock clock;
    private URI hubUrl;
    private Optional<SecretReference> hubToken;
    private Optional<Path> sourceDirectory;

    /** For CDI's proxy. */
    protected ModelCatalogue() {
    }

    @Inject
    public ModelCatalogue(DataSource dataSource, JdbcAuditLog audit, MacfleetConfig config) {
        this(dataSource, audit, Path.of(config.home()).resolve("models"), URI.create(config.models().hubUrl()),
                config.models().hubToken().map(SecretReference::of), config.models().sourceDirectory().map(Path::of), Clock.systemUTC());
    }

    public ModelCatalogue(DataSource dataSource, AuditLog audit, Path root, URI hubUrl, Optional<SecretReference> hubToken,
                          Optional<Path> sourceDirectory, Clock clock) {
        this.store = new CatalogueStore(dataSource);
        this.audit = audit;
        this.root = root;
        this.hubUrl = hubUrl;
        this.hubToken = hubToken;
        this.sourceDirectory = sourceDirectory;
        this.clock = clock;
    }

    public Optional<CatalogueModel> find(String name) {
        return store.find(name).map(CatalogueStore.Entry::model);
    }

    public List<CatalogueModel> list() {
        return store.all().stream().map(CatalogueStore.Entry::model).toList();
    }

    /** Where the verified bytes of one file of the model are on this host. */
    public Path localFile(CatalogueModel model, ModelFile file) {
        return directory(model.name()).resolve(file.path());
    }

    /** The model's directory on this host. */
    public Path directory(String name) {
        return root.resolve(name);
    }

    /** The model's attention shape (for the memory fit); {@link ModelShape#UNKNOWN} for a name not in the catalogue. */
    public ModelShape shape(String name) {
        return store.find(name).map(CatalogueStore.Entry::shape).orElse(ModelShape.UNKNOWN);
    }

    /**
     * What a runtime is given for this model on this host: the GGUF file (the first part of a split one), or the MLX
     * directory.
     */
    public Path weights(CatalogueModel model) {
        Optional<String> weights = store.find(model.name()).flatMap(CatalogueStore.Entry::weights);
        return weights.map(directory(model.name())::resolve).orElse(directory(model.name()));
    }

    /**
     * The inventory's {@code inference.model} (or a {@code --model}) read as a catalogue name: the model's weights on this
     * host when it is a name of the catalogue; empty for a path (the old way, still taken) or an unknown word.
     */
    public Optional<Path> resolve(String model) {
        if (model == null || !NAME.matcher(model).matches()) {
            return Optional.empty();
        }
        Optional<String> heldOn = heldOn(model);
        if (heldOn.isPresent()) {
            // Whoever asks for a path here would copy from this host; node deploy of the bundled node asks NodeService's
            // heldOnMac first (a release placed from that Mac), so this answers the runtimes that read a local path.
            throw new ModelRefused("model " + model + " is held on " + heldOn.get() + " (added with --via), not on this host, and this deploy"
                    + " reads it from here: `macfleet model place CLUSTER " + model + "` places it from " + heldOn.get()
                    + " (nothing sent from this host), the bundled node deploys it by name, or add it again without --via");
        }
        return find(model).map(this::weights);
    }

    /** Whether the text has the form of a catalogue name (rather than a path or URL). */
    public static boolean isName(String text) {
        return text != null && NAME.matcher(text).matches();
    }

    /** Where REST clients may add local sources from ({@code macfleet.models.source-directory}), if configured. */
    public Optional<Path> sourceDirectory() {
        return sourceDirectory;
    }

    /**
     * Adds a model. {@code source} is a local path or {@code hf:ORG/REPOSITORY@REVISION}; {@code include} is a glob over
     * the source's relative paths; {@code token} a secret reference for the hub that overrides the configured one.
     */
    public CatalogueModel add(String name, String source, Optional<String> include, Optional<SecretReference> token, String actor,
                              HuggingFaceHub.Progress progress) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new ModelRefused("bad model name '" + name + "': letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100");
        }
        if (source == null || source.isBlank()) {
            throw new ModelRefused("no source given for model " + name + ": a GGUF file, an MLX directory or hf:ORG/REPOSITORY@REVISION");
        }
        if (store.find(name).isPresent()) {
            throw new ModelRefused(ModelRefused.Reason.CONFLICT, "model " + name + " is already in the catalogue (remove it first)");
        }
        Path target = directory(name);
        if (Files.exists(target)) {
            removeOrphan(name, target, actor);
        }
        try {
            Files.createDirectories(root);
            CatalogueModel model;
            ModelInspection inspection;
            Path staged;
            if (HuggingFaceHub.Reference.isReference(source)) {
                HuggingFaceHub.Reference reference = HuggingFaceHub.Reference.parse(source);
                staged = root.resolve(DOWNLOADS).resolve(name);
                Files.createDirectories(staged);
                Optional<String> secret;
                try {
                    secret = token.map(given -> given.resolve(System.getenv())).or(() -> hubToken.map(SecretReference::resolve));
                } catch (io.macfleet.secrets.SecretUnavailableException e) {
                    throw new ModelRefused("the hub token is not available: " + e.getMessage());
                }
                HuggingFaceHub.Download download = new HuggingFaceHub(hubUrl, secret).download(reference, include, staged, progress);
                // Files of an earlier attempt with another selection stay out of the model.
                pruneExcept(staged, download.files());
                try {
                    inspection = inspect(staged, download.files());
                } catch (ModelRefused notAModel) {
                    deleteTree(staged);
                    throw notAModel;
                }
                model = model(name, inspection, download.files(), "hf:" + reference.repository() + "@" + download.commit());
            } else {
                LocalSource local = LocalSource.of(Path.of(source), include);
                ModelInspection checked = ModelInspection.of(local.root(), local.files());
                staged = Files.createTempDirectory(root, STAGING + "-" + name + "-");
                List<ModelFile> files = new ArrayList<>();
                for (String file : local.files()) {
                    files.add(copy(local.root().resolve(file), staged.resolve(file), file, progress));
                }
                inspection = checked;
                model = model(name, inspection, files, Path.of(source).toAbsolutePath().normalize().toString());
            }
            try {
                Files.move(staged, target, StandardCopyOption.ATOMIC_MOVE);
                boolean inserted = store.insert(new CatalogueStore.Entry(model, inspection.shape(), Optional.ofNullable(inspection.weights()),
                        actor, clock.instant()));
                if (!inserted) {
                    deleteTree(target);
                    throw new ModelRefused(ModelRefused.Reason.CONFLICT, "model " + name + " was added meanwhile by someone else");
                }
            } catch (RuntimeException e) {
                if (!(e instanceof ModelRefused)) {
                    deleteTree(target);
                }
                throw e;
            }
            audit.record(new AuditEvent(clock.instant(), actor, null, "model.add", name + " from " + model.source() + " ("
                    + model.files().size() + " files, " + model.totalBytes() + " bytes)", AuditEvent.Outcome.SUCCESS));
            return model;
        } catch (IOException e) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, "cannot store model " + name + " under " + root + ": " + e.getMessage());
        }
    }

    /** The Mac that holds the model's files when it was added with {@code --via}; empty when this host holds them. */
    public Optional<String> heldOn(String name) {
        return store.find(name).flatMap(CatalogueStore.Entry::heldOn);
    }

    /** Runs {@link MacHubDownload} on the Mac named at {@code --via} (the caller owns the SSH connection). */
    public interface MacDownloader {
        MacHubDownload.Result download(HuggingFaceHub.Plan plan, Optional<String> token, Path sketch);
    }

    /**
     * {@code model add NAME hf:... --via MACHINE}: this host asks the hub what to fetch, the Mac downloads and verifies
     * the files ({@link MacHubDownload}); the row records them, their SHA-256 and that {@code machine} holds them.
     */
    public CatalogueModel addVia(String name, String source, Optional<String> include, Optional<SecretReference> token, String actor,
                                 String machine, MacDownloader downloader) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new ModelRefused("bad model name '" + name + "': letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100");
        }
        if (!HuggingFaceHub.Reference.isReference(source)) {
            throw new ModelRefused("--via " + machine + " downloads from the hub: the source must be hf:ORG/REPOSITORY@REVISION, got " + source);
        }
        if (store.find(name).isPresent()) {
            throw new ModelRefused(ModelRefused.Reason.CONFLICT, "model " + name + " is already in the catalogue (remove it first)");
        }
        HuggingFaceHub.Reference reference = HuggingFaceHub.Reference.parse(source);
        Optional<String> secret;
        try {
            secret = token.map(given -> given.resolve(System.getenv())).or(() -> hubToken.map(SecretReference::resolve));
        } catch (io.macfleet.secrets.SecretUnavailableException e) {
            throw new ModelRefused("the hub token is not available: " + e.getMessage());
        }
        HuggingFaceHub.Plan plan = new HuggingFaceHub(hubUrl, secret).plan(reference, include);
        Path sketch;
        try {
            Files.createDirectories(root);
            sketch = Files.createTempDirectory(root, STAGING + "-headers-" + name + "-");
        } catch (IOException e) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, "cannot create a directory under " + root + ": " + e.getMessage());
        }
        try {
            MacHubDownload.Result result = downloader.download(plan, secret, sketch);
            CatalogueModel model = model(name, result.inspection(), result.files(), "hf:" + reference.repository() + "@" + result.commit());
            boolean inserted = store.insert(new CatalogueStore.Entry(model, result.inspection().shape(),
                    Optional.ofNullable(result.inspection().weights()), actor, clock.instant(), Optional.of(machine)));
            if (!inserted) {
                throw new ModelRefused(ModelRefused.Reason.CONFLICT, "model " + name + " was added meanwhile by someone else");
            }
            audit.record(new AuditEvent(clock.instant(), actor, machine, "model.add", name + " from " + model.source() + " via " + machine
                    + " (" + model.files().size() + " files, " + model.totalBytes() + " bytes, held on " + machine + ")", AuditEvent.Outcome.SUCCESS));
            return model;
        } finally {
            deleteTree(sketch);
        }
    }

    /** How long a directory without a row must have been in place before it counts as left by a crash, not as an add under way. */
    static final java.time.Duration ORPHAN_AFTER = java.time.Duration.ofMinutes(1);

    /**
     * A directory {@code models/NAME} without a catalogue row was left by an add that stopped between renaming it into
     * place and writing the row (the row is written last): nothing refers to its files, so it is moved aside and removed,
     * with an audit entry saying so, and the add goes on. One renamed into place moments ago (its change time is recent)
     * may be another add's, about to write its row: that is refused as a conflict instead.
     */
    private void removeOrphan(String name, Path target, String actor) {
        try {
            java.nio.file.attribute.FileTime changed = (java.nio.file.attribute.FileTime) Files.getAttribute(target, "unix:ctime");
            if (changed.toInstant().plus(ORPHAN_AFTER).isAfter(clock.instant())) {
                throw new ModelRefused(ModelRefused.Reason.CONFLICT, target + " was put in place moments ago without a catalogue row: another"
                        + " add of " + name + " is probably finishing; try again in a minute");
            }
            Path aside = Files.createTempDirectory(root, STAGING + "-orphan-" + name + "-");
            Files.move(target, aside.resolve(name), StandardCopyOption.ATOMIC_MOVE);
            deleteTree(aside);
        } catch (IOException | UnsupportedOperationException e) {
            throw new ModelRefused(ModelRefused.Reason.CONFLICT, target + " exists but model " + name + " is not in the catalogue, and it"
                    + " could not be removed (" + e.getMessage() + "): remove that directory and add again");
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "model.add", "removed " + target + ": a directory without a catalogue row"
                + " (left by an add that stopped before writing it); adding " + name + " anew", AuditEvent.Outcome.SUCCESS));
    }

    /** Removes the model's row, then its files; false when there is no such model. */
    public boolean remove(String name, String actor) {
        if (!store.delete(name)) {
            return false;
        }
        deleteTree(directory(name));
        audit.record(new AuditEvent(clock.instant(), actor, null, "model.remove", name, AuditEvent.Outcome.SUCCESS));
        return true;
    }

    private static void pruneExcept(Path directory, List<ModelFile> files) {
        java.util.Set<Path> keep = new java.util.HashSet<>();
        files.forEach(file -> keep.add(directory.resolve(file.path()).normalize()));
        try (Stream<Path> walk = Files.walk(directory)) {
            for (Path path : walk.filter(Files::isRegularFile).toList()) {
                if (!keep.contains(path.normalize())) {
                    Files.delete(path);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clean " + directory, e);
        }
    }

    private static ModelInspection inspect(Path directory, List<ModelFile> files) {
        return ModelInspection.of(directory, files.stream().map(ModelFile::path).toList());
    }

    private static CatalogueModel model(String name, ModelInspection inspection, List<ModelFile> files, String source) {
        List<ModelFile> sorted = files.stream().sorted(Comparator.comparing(ModelFile::path)).toList();
        return new CatalogueModel(name, inspection.format(), inspection.architecture(), inspection.quantization(), sorted,
                sorted.stream().mapToLong(ModelFile::size).sum(), inspection.runtimes(), source);
    }

    /** Copies one file, hashing it on the way, into {@code PATH.partial}, then renames it into place. */
    private static ModelFile copy(Path from, Path to, String relative, HuggingFaceHub.Progress progress) throws IOException {
        Files.createDirectories(to.getParent());
        Path partial = to.resolveSibling(to.getFileName() + ".partial");
        long size = Files.size(from);
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        long done = 0;
        long shown = 0;
        try (InputStream in = Files.newInputStream(from); OutputStream out = Files.newOutputStream(partial)) {
            byte[] buffer = new byte[1 << 16];
            int read;
            progress.transferred(relative, 0, size);
            while ((read = in.read(buffer)) >= 0) {
                out.write(buffer, 0, read);
                digest.update(buffer, 0, read);
                done += read;
                if (done - shown >= size / 100) {
                    progress.transferred(relative, done, size);
                    shown = done;
                }
            }
        }
        if (done != size) {
            throw new IOException(from + " changed while it was copied (" + done + " bytes read, " + size + " expected)");
        }
        progress.transferred(relative, done, size);
        Files.move(partial, to, StandardCopyOption.ATOMIC_MOVE);
        return new ModelFile(relative, size, HexFormat.of().formatHex(digest.digest()));
    }

    private static void deleteTree(Path directory) {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(directory)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + directory, e);
        }
    }

    /** A local source: the directory its files are relative to, and those files. */
    record LocalSource(Path root, List<String> files) {

        static LocalSource of(Path source, Optional<String> include) {
            if (!Files.exists(source)) {
                throw new ModelRefused(ModelRefused.Reason.NOT_FOUND, "model source " + source + " does not exist");
            }
            Path absolute = source.toAbsolutePath().normalize();
            if (Files.isRegularFile(absolute)) {
                if (include.isPresent()) {
                    throw new ModelRefused("--include selects files of a directory; " + source + " is a file");
                }
                String fileName = absolute.getFileName().toString();
                Matcher split = ModelInspection.SPLIT.matcher(fileName);
                if (split.matches()) {
                    try (Stream<Path> siblings = Files.list(absolute.getParent())) {
                        List<String> parts = siblings.map(path -> path.getFileName().toString())
                                .filter(other -> other.startsWith(split.group(1) + "-") && ModelInspection.SPLIT.matcher(other).matches())
                                .sorted().toList();
                        return new LocalSource(absolute.getParent(), parts);
                    } catch (IOException e) {
                        throw new ModelRefused("cannot list " + absolute.getParent() + ": " + e.getMessage());
                    }
                }
                return new LocalSource(absolute.getParent(), List.of(fileName));
            }
            List<String> files;
            try (Stream<Path> walk = Files.walk(absolute)) {
                files = walk.filter(Files::isRegularFile).map(path -> absolute.relativize(path).toString())
                        .filter(path -> !path.startsWith(".") && !path.contains("/.")).sorted().toList();
            } catch (IOException e) {
                throw new ModelRefused("cannot read the model directory " + source + ": " + e.getMessage());
            }
            if (include.isPresent()) {
                PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + include.get());
                files = files.stream().filter(path -> matcher.matches(Path.of(path))).toList();
                if (files.isEmpty()) {
                    throw new ModelRefused("no file of " + source + " matches --include " + include.get());
                }
            } else if (!files.contains("config.json")) {
                files = files.stream().filter(path -> path.endsWith(".gguf")).toList();
            }
            return new LocalSource(absolute, files);
        }
    }
}
