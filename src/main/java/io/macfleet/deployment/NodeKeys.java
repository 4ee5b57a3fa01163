package io.macfleet.deployment;

import io.macfleet.secrets.PrivateFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The two secrets of a cluster's bundled node, made once per cluster on the control host and kept there (mode 600,
 * under {@code macfleet.home/node-keys/CLUSTER/}): the mesh key the ranks prove to each other ({@code serve
 * --cluster-key}) and the bearer key of the cluster's OpenAI endpoint ({@code serve --api-key file:}). Each deploy
 * copies both to every Mac (mode 600) and names them in the daemon's arguments by path, so neither key is in a plist,
 * an argument list, a log or an API answer.
 *
 * @param meshKeyFile the mesh key on the control host
 * @param apiKeyFile the endpoint's bearer key on the control host: what clients send (`Authorization: Bearer ...`)
 */
public record NodeKeys(Path meshKeyFile, Path apiKeyFile) {

    private static final SecureRandom RANDOM = new SecureRandom();

    /** Where a Mac keeps them: read by the daemon, written by no one but the deployment. */
    public static final String MESH_KEY_ON_MAC = NodeLayout.KEY_DIRECTORY + "/mesh.key";
    public static final String API_KEY_ON_MAC = NodeLayout.KEY_DIRECTORY + "/api.key";

    /** The cluster's keys under {@code directory}, made now when the cluster has none yet. */
    public static NodeKeys of(Path directory, String cluster) {
        if (!cluster.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            throw new IllegalArgumentException("cluster name '" + cluster + "' cannot name a key directory");
        }
        Path home = directory.resolve(cluster);
        NodeKeys keys = new NodeKeys(home.resolve("mesh.key"), home.resolve("api.key"));
        try {
            ensure(keys.meshKeyFile());
            ensure(keys.apiKeyFile());
        } catch (IOException e) {
            throw new IllegalStateException("cannot keep the node keys of cluster " + cluster + " in " + home + ": " + e.getMessage(), e);
        }
        return keys;
    }

    /** 32 random bytes as 64 hex digits: the node takes at least 32 bytes of a mesh key and 16 characters of an API key. */
    private static void ensure(Path file) throws IOException {
        if (Files.isRegularFile(file) && Files.size(file) >= 64) {
            return;
        }
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        PrivateFiles.write(file, HexFormat.of().formatHex(secret) + "\n");
    }

    byte[] meshKey() throws IOException {
        return Files.readString(meshKeyFile).strip().getBytes(StandardCharsets.US_ASCII);
    }

    byte[] apiKey() throws IOException {
        return Files.readString(apiKeyFile).strip().getBytes(StandardCharsets.US_ASCII);
    }
}
