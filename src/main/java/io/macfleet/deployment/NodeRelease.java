package io.macfleet.deployment;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.jar.JarFile;

/**
 * What a deployment puts on every Mac: the node's jar and the model, each with its SHA-256. The model comes from a
 * file on the control host (copied over SFTP) or from a URL each Mac fetches itself (then its SHA-256 and size must
 * be given: nothing is installed that was not verified).
 */
public record NodeRelease(Path nodeJar, String nodeSha256, String nodeVersion, Optional<Path> modelFile, Optional<URI> modelUrl,
                          String modelFileName, String modelSha256, long modelSize, Optional<String> catalogueName) {

    /** A release whose model is not (known to be) a catalogue model. */
    public NodeRelease(Path nodeJar, String nodeSha256, String nodeVersion, Optional<Path> modelFile, Optional<URI> modelUrl,
                       String modelFileName, String modelSha256, long modelSize) {
        this(nodeJar, nodeSha256, nodeVersion, modelFile, modelUrl, modelFileName, modelSha256, modelSize, Optional.empty());
    }

    /**
     * The same release, its model named as the catalogue names it: node deploy's fan-out places the catalogue's model by
     * that name (no looking the name up again by path).
     */
    public NodeRelease withCatalogueName(String name) {
        return new NodeRelease(nodeJar, nodeSha256, nodeVersion, modelFile, modelUrl, modelFileName, modelSha256, modelSize, Optional.of(name));
    }

    public NodeRelease {
        if (modelFile.isPresent() && modelUrl.isPresent() || modelFile.isEmpty() && modelUrl.isEmpty() && catalogueName.isEmpty()) {
            throw new IllegalArgumentException("a release has a model file or a model URL, one of them (or neither for a catalogue model a Mac holds)");
        }
        NodeLayout.shortHash(nodeSha256);
        NodeLayout.shortHash(modelSha256);
        if (!modelFileName.matches("[A-Za-z0-9._-]+") || modelFileName.startsWith(".")) {
            throw new IllegalArgumentException("model file name '" + modelFileName + "' must be letters, digits, '.', '_' or '-'");
        }
    }

    /** The jar and a model file on this host, both hashed here. */
    public static NodeRelease of(Path nodeJar, Path model) throws IOException {
        requireFile(nodeJar, "node jar");
        requireModel(model);
        return new NodeRelease(nodeJar, sha256(nodeJar), nodeVersion(nodeJar), Optional.of(model), Optional.empty(),
                model.getFileName().toString(), sha256(model), Files.size(model));
    }

    /**
     * A catalogue model that only a Mac holds ({@code model add --via}): this host has no copy, so node deploy's fan-out
     * places it from that Mac and staging only finds it in place; a Mac where it is not is refused, never copied to.
     */
    public static NodeRelease heldOnMac(Path nodeJar, String catalogueName, String modelFileName, String modelSha256, long modelSize) throws IOException {
        requireFile(nodeJar, "node jar");
        return new NodeRelease(nodeJar, sha256(nodeJar), nodeVersion(nodeJar), Optional.empty(), Optional.empty(), modelFileName, modelSha256,
                modelSize, Optional.of(catalogueName));
    }

    /** Whether this host has no copy of the model (a catalogue model held on a Mac): staging must find it in place. */
    public boolean modelOnlyOnMacs() {
        return modelFile.isEmpty() && modelUrl.isEmpty();
    }

    /** Where the model comes from, as the plan and the deployment's record say it. */
    public String modelSource() {
        return modelFile.map(file -> file.toAbsolutePath().toString()).or(() -> modelUrl.map(URI::toString))
                .orElseGet(() -> HELD_ON_MAC + catalogueName.orElseThrow());
    }

    /** The prefix of {@link #modelSource()} for a catalogue model held on a Mac. */
    public static final String HELD_ON_MAC = "catalogue-on-mac:";

    /** The jar on this host and a model each Mac downloads from {@code url}; its hash and size are the operator's. */
    public static NodeRelease of(Path nodeJar, URI url, String modelSha256, long modelSize) throws IOException {
        requireFile(nodeJar, "node jar");
        if (!"https".equals(url.getScheme()) && !"http".equals(url.getScheme())) {
            throw new IllegalArgumentException("--model URL must be http or https, got " + url);
        }
        if (url.getRawUserInfo() != null) {
            // Every Mac runs curl with the URL as an argument, visible to anyone on it in the process list.
            throw new IllegalArgumentException("--model URL must not carry credentials (user:password@): each Mac's curl"
                    + " gets the URL on its command line; serve the model from a host the Macs can reach without them");
        }
        if (modelSha256 == null || !modelSha256.toLowerCase(Locale.ROOT).matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("--model URL needs --model-sha256 with the model's SHA-256 (64 hex digits)");
        }
        if (modelSize <= 0) {
            throw new IllegalArgumentException("--model URL needs --model-size with the model's size in bytes");
        }
        String path = url.getPath() == null ? "" : url.getPath();
        String name = path.substring(path.lastIndexOf('/') + 1);
        return new NodeRelease(nodeJar, sha256(nodeJar), nodeVersion(nodeJar), Optional.empty(), Optional.of(url),
                name.isEmpty() ? "model.gguf" : name, modelSha256.toLowerCase(Locale.ROOT), modelSize);
    }

    public String jarPath() {
        return NodeLayout.jar(nodeSha256);
    }

    public String modelPath() {
        return NodeLayout.model(modelSha256, modelFileName);
    }

    /**
     * A model is a GGUF file: its first four bytes are "GGUF". Anything else (a password file, a directory, a file
     * that is not there) is refused with one and the same sentence, so an answer does not tell which of them a path
     * names on the service's host; a file sent to every Mac is never one that only happens to be readable here.
     */
    static void requireModel(Path model) {
        byte[] magic = new byte[4];
        boolean gguf;
        try (InputStream in = Files.isRegularFile(model) ? Files.newInputStream(model) : InputStream.nullInputStream()) {
            gguf = in.readNBytes(magic, 0, 4) == 4 && new String(magic, java.nio.charset.StandardCharsets.US_ASCII).equals("GGUF");
        } catch (IOException | SecurityException e) {
            gguf = false;
        }
        if (!gguf) {
            throw new IllegalArgumentException("model " + model + " is not a GGUF model file this host can read");
        }
    }

    private static void requireFile(Path file, String what) {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(what + " " + file + " is not a readable file");
        }
    }

    public static String sha256(Path file) throws IOException {
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), MessageDigest.getInstance("SHA-256"))) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
            return HexFormat.of().formatHex(((DigestInputStream) in).getMessageDigest().digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String sha256(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The jar's Implementation-Version, else the version in its Maven file name, else "unknown". */
    static String nodeVersion(Path jar) {
        try (JarFile file = new JarFile(jar.toFile())) {
            String version = file.getManifest() == null ? null : file.getManifest().getMainAttributes().getValue("Implementation-Version");
            if (version != null) {
                return version;
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("node jar " + jar + " is not a jar: " + e.getMessage(), e);
        }
        String name = jar.getFileName().toString();
        return name.matches("inference-node-.+\\.jar") ? name.substring("inference-node-".length(), name.length() - 4) : "unknown";
    }
}
