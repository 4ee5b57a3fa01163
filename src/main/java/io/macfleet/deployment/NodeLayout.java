package io.macfleet.deployment;

import io.macfleet.models.ModelLayout;

/**
 * Where the inference node lives on a Mac. Every staged file carries the first 12 hex digits of its SHA-256 in its
 * name, so a new version is staged next to the one that serves and the switch is only the daemon's definition.
 */
public final class NodeLayout {
    public static final String LABEL = "io.macfleet.inference-node";
    public static final String HOME = ModelLayout.HOME;
    public static final String NODE_DIRECTORY = HOME + "/node";
    public static final String MODEL_DIRECTORY = ModelLayout.DIRECTORY;
    /** The cluster's keys on a Mac (see {@link NodeKeys}): mode 700, its files 600. */
    public static final String KEY_DIRECTORY = HOME + "/keys";
    public static final String LOG_DIRECTORY = "/var/log/macfleet";
    /**
     * Where the SSH user puts files before root installs them (mode 700, the SSH user's): the node's own directories
     * are root's, so that account cannot replace what the daemon runs (issue 29).
     */
    public static final String STAGING_DIRECTORY = ModelLayout.STAGING_DIRECTORY;
    public static final String PLIST = "/Library/LaunchDaemons/" + LABEL + ".plist";
    /** The environment variables of the daemon that say what it runs (read back by status). */
    public static final String NODE_SHA256 = "MACFLEET_NODE_SHA256";
    public static final String NODE_VERSION = "MACFLEET_NODE_VERSION";
    public static final String MODEL_SHA256 = "MACFLEET_MODEL_SHA256";
    public static final String RANK = "MACFLEET_RANK";
    public static final String CLUSTER = "MACFLEET_CLUSTER";

    private NodeLayout() {
    }

    public static String jar(String sha256) {
        return NODE_DIRECTORY + "/inference-node-" + shortHash(sha256) + ".jar";
    }

    public static String model(String sha256, String fileName) {
        return ModelLayout.singleFile(sha256, fileName);
    }

    public static String clusterFile(String sha256) {
        return NODE_DIRECTORY + "/cluster-" + shortHash(sha256) + ".json";
    }

    /** The staging copy of a file that root installs at {@code finalPath}. */
    public static String staged(String finalPath) {
        return STAGING_DIRECTORY + "/" + finalPath.substring(finalPath.lastIndexOf('/') + 1);
    }

    public static String errorLog() {
        return LOG_DIRECTORY + "/" + LABEL + ".err.log";
    }

    public static String shortHash(String sha256) {
        if (sha256 == null || !sha256.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("not a SHA-256 in lower-case hex: " + sha256);
        }
        return sha256.substring(0, 12);
    }
}
