package io.macfleet.models;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Downloads a model's files from a Hugging Face hub (or anything answering like it), the way huggingface_hub's
 * file_download.py does:
 * <ul>
 *   <li>{@code GET /api/models/{repo}/revision/{revision}?blobs=true}: the commit ({@code sha}) and the files
 *       ({@code siblings[].rfilename}, {@code size}, {@code lfs.sha256});</li>
 *   <li>{@code HEAD /{repo}/resolve/{commit}/{file}} without following redirects: an LFS file answers 302 to its CDN
 *       with {@code X-Linked-Etag} (its SHA-256, quoted) and {@code X-Linked-Size}; a small file answers 200 with an
 *       {@code ETag} that is git's blob SHA-1;</li>
 *   <li>{@code GET} of the CDN location (or the resolve URL) into {@code FILE.partial}, resumed with
 *       {@code Range: bytes=N-}; the bytes are hashed as they arrive and checked against the hub's hash before the
 *       file is renamed into place.</li>
 * </ul>
 * The token goes to the hub's own host only, never to the CDN a redirect names, and is never written anywhere.
 */
public final class HuggingFaceHub {

    /** {@code hf:org/repo@revision}; the revision is a branch, tag or commit (default main). */
    public record Reference(String repository, String revision) {
        private static final Pattern REPOSITORY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*");
        private static final Pattern REVISION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._/-]*");

        public static boolean isReference(String source) {
            return source != null && source.startsWith("hf:");
        }

        public static Reference parse(String source) {
            String rest = source.substring(3);
            int at = rest.indexOf('@');
            String repository = at < 0 ? rest : rest.substring(0, at);
            String revision = at < 0 ? "main" : rest.substring(at + 1);
            if (!REPOSITORY.matcher(repository).matches() || !REVISION.matcher(revision).matches() || revision.contains("..")) {
                throw new ModelRefused("bad Hugging Face source " + source + ": expected hf:ORG/REPOSITORY@REVISION");
            }
            return new Reference(repository, revision);
        }

        @Override
        public String toString() {
            return "hf:" + repository + "@" + revision;
        }
    }

    /** Bytes of one file arriving (resumed bytes count as done). */
    public interface Progress {
        void transferred(String file, long done, long total);

        Progress NONE = (file, done, total) -> {
        };
    }

    /** A file the hub lists, with what it publishes about it. */
    record HubFile(String path, long size, Optional<String> sha256) {
    }

    /**
     * One file as the hub publishes it, for a downloader elsewhere ({@code model add --via}): where its bytes are (the
     * CDN location of an LFS file, else the resolve URL), its size and its hash.
     *
     * @param hubOrigin whether {@code location} is the hub's own origin (the only place the token may go)
     */
    public record PlannedFile(String name, String path, long size, Optional<String> sha256, Optional<String> gitSha1, URI location,
                              boolean hubOrigin) {
    }

    /** The commit a revision names and its chosen files, as published. */
    public record Plan(String commit, List<PlannedFile> files) {
    }

    /** What came down: the commit the revision named, and each file verified. */
    public record Download(String commit, List<ModelFile> files) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern SHA1 = Pattern.compile("[0-9a-f]{40}");
    private static final int BUFFER = 1 << 16;

    private final URI hub;
    private final Optional<String> token;
    private final HttpClient http;

    public HuggingFaceHub(URI hub, Optional<String> token) {
        this.hub = hub;
        this.token = token;
        this.http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).connectTimeout(Duration.ofSeconds(30)).build();
    }

    /**
     * Brings the files of {@code reference} that {@code include} matches (a glob over the repository's paths; empty:
     * the model files, see {@link #select}) into {@code directory}, resuming {@code .partial} files left there.
     */
    public Download download(Reference reference, Optional<String> include, Path directory, Progress progress) {
        JsonNode revision = revision(reference);
        String commit = revision.path("sha").asText(reference.revision());
        List<HubFile> listed = new ArrayList<>();
        revision.path("siblings").forEach(sibling -> {
            JsonNode lfs = sibling.path("lfs");
            listed.add(new HubFile(sibling.path("rfilename").asText(), sibling.path("size").asLong(lfs.path("size").asLong(-1)),
                    Optional.ofNullable(lfs.path("sha256").textValue())));
        });
        List<HubFile> chosen = select(reference, listed, include);
        List<ModelFile> files = new ArrayList<>();
        for (HubFile file : chosen) {
            files.add(file(reference, commit, file, directory, progress));
        }
        return new Download(commit, files);
    }

    /** The files of {@code reference} that {@code include} matches, with their hashes and locations; nothing downloaded. */
    public Plan plan(Reference reference, Optional<String> include) {
        JsonNode revision = revision(reference);
        String commit = revision.path("sha").asText(reference.revision());
        List<HubFile> listed = new ArrayList<>();
        revision.path("siblings").forEach(sibling -> {
            JsonNode lfs = sibling.path("lfs");
            listed.add(new HubFile(sibling.path("rfilename").asText(), sibling.path("size").asLong(lfs.path("size").asLong(-1)),
                    Optional.ofNullable(lfs.path("sha256").textValue())));
        });
        List<PlannedFile> planned = new ArrayList<>();
        for (HubFile file : select(reference, listed, include)) {
            planned.add(planned(reference, commit, file));
        }
        return new Plan(commit, planned);
    }

    /**
     * The files to take: those {@code include} matches; without it, the GGUF files when the repository has some (refused
     * when they are several models: say which with --include), else an MLX model's config, weights and tokenizer.
     */
    static List<HubFile> select(Reference reference, List<HubFile> listed, Optional<String> include) {
        List<HubFile> chosen;
        if (include.isPresent()) {
            PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + include.get());
            chosen = listed.stream().filter(file -> matcher.matches(Path.of(file.path()))).toList();
            if (chosen.isEmpty()) {
                throw new ModelRefused(reference + ": no file matches --include " + include.get() + " (the repository has "
                        + String.join(", ", listed.stream().map(HubFile::path).limit(20).toList()) + (listed.size() > 20 ? ", ..." : "") + ")");
            }
        } else {
            List<HubFile> ggufs = listed.stream().filter(file -> file.path().endsWith(".gguf")).toList();
            if (!ggufs.isEmpty()) {
                chosen = ggufs;
            } else {
                chosen = listed.stream().filter(file -> !file.path().contains("/") && (file.path().endsWith(".json")
                        || file.path().endsWith(".safetensors") || file.path().endsWith(".model") || file.path().endsWith(".txt")
                        || file.path().endsWith(".jinja") || file.path().endsWith(".tiktoken"))).toList();
            }
        }
        for (HubFile file : chosen) {
            if (file.path().startsWith("/") || Path.of(file.path()).normalize().startsWith("..") || file.path().contains("\\")) {
                throw new ModelRefused(reference + ": the hub lists a file outside the repository: " + file.path());
            }
        }
        return chosen;
    }

    private JsonNode revision(Reference reference) {
        URI uri = hub.resolve("/api/models/" + reference.repository() + "/revision/" + encode(reference.revision()) + "?blobs=true");
        HttpResponse<byte[]> response = send(withToken(HttpRequest.newBuilder(uri), uri).GET().build(), HttpResponse.BodyHandlers.ofByteArray(),
                reference + " (" + uri + ")");
        refuseStatus(response.statusCode(), reference.toString(), uri);
        try {
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, reference + ": the hub's answer at " + uri + " is not JSON");
        }
    }

    private PlannedFile planned(Reference reference, String commit, HubFile listed) {
        String name = reference + " " + listed.path();
        URI resolve = hub.resolve("/" + reference.repository() + "/resolve/" + encode(commit) + "/"
                + String.join("/", java.util.Arrays.stream(listed.path().split("/")).map(HuggingFaceHub::encode).toList()));
        HttpResponse<Void> head = send(withToken(HttpRequest.newBuilder(resolve), resolve).method("HEAD", HttpRequest.BodyPublishers.noBody())
                .build(), HttpResponse.BodyHandlers.discarding(), name);
        int status = head.statusCode();
        URI location = resolve;
        if (status >= 300 && status < 400) {
            location = resolve.resolve(head.headers().firstValue("Location").orElseThrow(() -> new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED,
                    name + ": the hub redirected without a Location")));
        } else {
            refuseStatus(status, name, resolve);
        }
        String etag = normalize(head.headers().firstValue("X-Linked-Etag").or(() -> head.headers().firstValue("ETag")).orElse(""));
        long size = head.headers().firstValue("X-Linked-Size").or(() -> status < 300 ? head.headers().firstValue("Content-Length") : Optional.empty())
                .map(Long::parseLong).orElse(listed.size());
        Optional<String> sha256 = SHA256.matcher(etag).matches() ? Optional.of(etag) : listed.sha256();
        Optional<String> gitSha1 = sha256.isEmpty() && SHA1.matcher(etag).matches() ? Optional.of(etag) : Optional.empty();
        if (sha256.isEmpty() && gitSha1.isEmpty()) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": the hub publishes no hash of it (no X-Linked-Etag,"
                    + " ETag or LFS oid); not taken unverified");
        }
        if (size < 0) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": the hub publishes no size of it");
        }
        return new PlannedFile(name, listed.path(), size, sha256, gitSha1, location, sameOrigin(location));
    }

    private ModelFile file(Reference reference, String commit, HubFile listed, Path directory, Progress progress) {
        PlannedFile planned = planned(reference, commit, listed);
        String name = planned.name();
        URI location = planned.location();
        long size = planned.size();
        Optional<String> sha256 = planned.sha256();
        Optional<String> gitSha1 = planned.gitSha1();
        Path target = directory.resolve(listed.path()).normalize();
        Path partial = target.resolveSibling(target.getFileName() + ".partial");
        try {
            Files.createDirectories(target.getParent());
            if (Files.isRegularFile(target) && Files.size(target) == size) {
                String existing = sha256(target);
                if (sha256.map(existing::equals).orElseGet(() -> gitBlobSha1(target).equals(gitSha1.orElseThrow()))) {
                    progress.transferred(listed.path(), size, size);
                    return new ModelFile(listed.path(), size, existing);
                }
            }
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            long have = Files.isRegularFile(partial) ? Files.size(partial) : 0;
            if (have > size) {
                Files.delete(partial);
                have = 0;
            }
            if (have > 0) {
                try (InputStream in = Files.newInputStream(partial)) {
                    update(digest, in);
                }
            }
            if (have < size) {
                have = fetch(name, location, partial, have, size, digest, progress, listed.path());
            }
            if (have != size) {
                throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": the download ended after " + have + " of " + size
                        + " bytes (kept as " + partial.getFileName() + "; the next add resumes it)");
            }
            String actual = HexFormat.of().formatHex(digest.digest());
            boolean verified = sha256.isPresent() ? sha256.get().equals(actual) : gitBlobSha1(partial).equals(gitSha1.orElseThrow());
            if (!verified) {
                Files.deleteIfExists(partial);
                throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": SHA-256 mismatch: the hub publishes "
                        + sha256.orElse("git blob " + gitSha1.orElse("")) + ", the bytes received hash to " + actual + "; the file was removed");
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return new ModelFile(listed.path(), size, actual);
        } catch (IOException e) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": " + e.getMessage() + " (the partial file is kept for a resume)");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** GETs the bytes from {@code have} on, appending to the partial file; returns its length afterwards. */
    private long fetch(String name, URI location, Path partial, long have, long size, MessageDigest digest, Progress progress, String file)
            throws IOException {
        HttpRequest.Builder request = withToken(HttpRequest.newBuilder(location), location).GET();
        if (have > 0) {
            request.header("Range", "bytes=" + have + "-");
        }
        HttpResponse<InputStream> response = send(request.build(), HttpResponse.BodyHandlers.ofInputStream(), name);
        int status = response.statusCode();
        try (InputStream body = response.body()) {
            if (status == 200 && have > 0) {
                // The server ignored the range: start again from the first byte.
                digest.reset();
                have = 0;
            } else if (status != 200 && status != 206) {
                refuseStatus(status, name, location);
            }
            try (OutputStream out = Files.newOutputStream(partial, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    have == 0 ? StandardOpenOption.TRUNCATE_EXISTING : StandardOpenOption.APPEND)) {
                byte[] buffer = new byte[BUFFER];
                int read;
                long lastShown = have;
                progress.transferred(file, have, size);
                while ((read = body.read(buffer)) >= 0) {
                    if (have + read > size) {
                        throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": the hub sent more than the " + size
                                + " bytes it announced");
                    }
                    out.write(buffer, 0, read);
                    digest.update(buffer, 0, read);
                    have += read;
                    if (have - lastShown >= size / 100 || have == size) {
                        progress.transferred(file, have, size);
                        lastShown = have;
                    }
                }
            } catch (IOException broken) {
                // A connection that broke mid-body: what arrived is in the partial file, resumed next time.
                return Files.size(partial);
            }
        }
        return have;
    }

    private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler, String name) {
        try {
            return http.send(request, handler);
        } catch (IOException e) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": cannot reach " + request.uri().getHost() + ":"
                    + request.uri().getPort() + " (" + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": interrupted");
        }
    }

    private static void refuseStatus(int status, String name, URI uri) {
        String path = uri.getRawPath();
        switch (status) {
            case 200, 206 -> {
            }
            case 401, 403 -> throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": the hub refused access (" + status + " at "
                    + path + "): a gated or private repository needs a token (macfleet.models.hub-token or --hub-token env:NAME)");
            case 404 -> throw new ModelRefused(ModelRefused.Reason.NOT_FOUND, name + ": not found on the hub (404 at " + path + ")");
            default -> throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, name + ": the hub answered " + status + " at " + path);
        }
    }

    /** The token on requests to the hub's own host; a CDN of another host never sees it. */
    private HttpRequest.Builder withToken(HttpRequest.Builder request, URI uri) {
        request.timeout(Duration.ofMinutes(10));
        if (token.isPresent() && sameOrigin(uri)) {
            request.header("Authorization", "Bearer " + token.get());
        }
        return request;
    }

    private boolean sameOrigin(URI uri) {
        return hub.getHost().equalsIgnoreCase(uri.getHost()) && hub.getPort() == uri.getPort() && hub.getScheme().equalsIgnoreCase(uri.getScheme());
    }

    /** {@code W/"abc"} or {@code "abc"} → {@code abc}, as huggingface_hub's _normalize_etag. */
    static String normalize(String etag) {
        String value = etag.strip();
        if (value.startsWith("W/")) {
            value = value.substring(2);
        }
        return value.replace("\"", "").toLowerCase(Locale.ROOT);
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static String sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            update(digest, in);
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Git's object id of a blob: SHA-1 of {@code "blob SIZE\0"} and the bytes (what the hub's ETag of a small file is). */
    static String gitBlobSha1(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            digest.update(("blob " + Files.size(file) + "\0").getBytes(StandardCharsets.US_ASCII));
            update(digest, in);
            return HexFormat.of().formatHex(digest.digest());
        } catch (IOException e) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, "cannot read " + file + ": " + e.getMessage());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void update(MessageDigest digest, InputStream in) throws IOException {
        byte[] buffer = new byte[BUFFER];
        int read;
        while ((read = in.read(buffer)) >= 0) {
            digest.update(buffer, 0, read);
        }
    }
}
