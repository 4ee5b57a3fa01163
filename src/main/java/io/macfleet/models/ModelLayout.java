package io.macfleet.models;

/**
 * Where models live on a Mac. The models package owns this (the catalogue's downloads on a Mac, placement and the
 * node's deploy all put a model at the same path, so each finds what the other placed); deployment's
 * {@code NodeLayout} reads it from here rather than the other way round, because deployment builds on models.
 */
public final class ModelLayout {
    /** macfleet's directory on a Mac, root's. */
    public static final String HOME = "/usr/local/macfleet";
    /** Every model file, root:wheel 644 under a root-owned directory. */
    public static final String DIRECTORY = HOME + "/models";
    /** Where the SSH user puts files before root installs them (mode 700, the SSH user's). */
    public static final String STAGING_DIRECTORY = HOME + "/node-staging";

    private ModelLayout() {
    }

    /** A model of one file: {@code <first 12 hex digits of its SHA-256>-<file name>} in the models directory. */
    public static String singleFile(String sha256, String fileName) {
        if (sha256 == null || !sha256.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("not a SHA-256 in lower-case hex: " + sha256);
        }
        return DIRECTORY + "/" + sha256.substring(0, 12) + "-" + fileName;
    }
}
