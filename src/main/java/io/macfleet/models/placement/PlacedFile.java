package io.macfleet.models.placement;

import io.macfleet.deployment.NodeLayout;
import io.macfleet.models.CatalogueModel;
import io.macfleet.models.ModelFile;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * One file to place on every Mac of a cluster: the verified copy on the control host, where it goes under the Macs'
 * model directory ({@link NodeLayout#MODEL_DIRECTORY}), its size and SHA-256 (lower-case hex).
 *
 * @param path relative to {@link NodeLayout#MODEL_DIRECTORY}, '/'-separated, without '..'
 */
public record PlacedFile(Path localFile, String path, long size, String sha256) {
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

    public PlacedFile {
        if (path == null || path.isBlank() || path.startsWith("/") || path.contains("\\") || path.contains("\n")
                || java.util.Arrays.asList(path.split("/")).contains("..")) {
            throw new IllegalArgumentException("placed file path '" + path + "' must be relative to " + NodeLayout.MODEL_DIRECTORY
                    + " without '..'");
        }
        if (sha256 == null || !SHA256.matcher(sha256).matches()) {
            throw new IllegalArgumentException(path + ": SHA-256 must be 64 lower-case hex digits, got " + sha256);
        }
        if (size < 0) {
            throw new IllegalArgumentException(path + ": size " + size + " is negative");
        }
    }

    /** Where it lies on a Mac. */
    public String remotePath() {
        return NodeLayout.MODEL_DIRECTORY + "/" + path;
    }

    /**
     * A catalogue model's file. A model of one file goes where {@code node deploy} looks for it
     * ({@link NodeLayout#model}: {@code <first 12 hex of its SHA-256>-<name>}), so a deploy after a placement finds it in
     * place; the files of a model of several (split GGUF parts, an MLX directory) keep their layout under the model's name.
     */
    public static PlacedFile of(CatalogueModel model, ModelFile file, Path localFile) {
        String name = file.path().substring(file.path().lastIndexOf('/') + 1);
        String path = model.files().size() == 1
                ? NodeLayout.model(file.sha256(), name).substring(NodeLayout.MODEL_DIRECTORY.length() + 1)
                : model.name() + "/" + file.path();
        return new PlacedFile(localFile, path, file.size(), file.sha256());
    }
}
