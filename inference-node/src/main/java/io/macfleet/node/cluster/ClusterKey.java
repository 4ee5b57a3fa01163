package io.macfleet.node.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret every rank of one cluster shares ({@code serve --cluster-key FILE}): ranks prove they hold it in the
 * mesh handshake (HMAC-SHA256 challenge-response, both directions, fresh nonces) and heartbeats carry a MAC under a
 * key derived from it per connection. Without a key file ({@link #none()}) the same protocol runs under a key
 * everybody knows, so it authenticates nothing: allowed only when every address of the cluster file is a loopback
 * address (one host; tests and {@code launch-local}).
 */
public final class ClusterKey {
    /** Fewer bytes than this is not a key but a password; {@code openssl rand -hex 32} gives 64. */
    static final int MINIMUM_BYTES = 32;
    private static final int MAXIMUM_BYTES = 4096;
    static final int NONCE_BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] PUBLIC = "macfleet inference-node mesh without a cluster key".getBytes(StandardCharsets.US_ASCII);

    private final byte[] key;
    private final Path file;

    private ClusterKey(byte[] key, Path file) {
        this.key = key;
        this.file = file;
    }

    /** No key: the protocol runs under a public key (one host only, see the class comment). */
    public static ClusterKey none() {
        return new ClusterKey(PUBLIC, null);
    }

    /**
     * Reads a key file: its bytes, trailing white space removed, at least {@link #MINIMUM_BYTES}. Refused when the
     * file can be read or written by its group or others (it must be the daemon user's alone, mode 600 or 400).
     */
    public static ClusterKey read(Path file) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        byte[] bytes;
        try {
            if (view != null) {
                Set<PosixFilePermission> open = EnumSet.copyOf(view.readAttributes().permissions());
                open.retainAll(EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
                        PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE));
                if (!open.isEmpty()) {
                    throw new IllegalArgumentException("cluster key " + file + " is readable or writable by its group or others ("
                            + java.nio.file.attribute.PosixFilePermissions.toString(view.readAttributes().permissions())
                            + "): run chmod 600 on it");
                }
            }
            if (Files.size(file) > MAXIMUM_BYTES) {
                throw new IllegalArgumentException("cluster key " + file + " has more than " + MAXIMUM_BYTES + " bytes: is it the right file?");
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("cluster key " + file + " does not exist");
        }
        int end = bytes.length;
        while (end > 0 && Character.isWhitespace(bytes[end - 1])) {
            end--;
        }
        if (end < MINIMUM_BYTES) {
            throw new IllegalArgumentException("cluster key " + file + " has " + end + " bytes; a key has at least "
                    + MINIMUM_BYTES + " (make one with: openssl rand -hex 32 > " + file.getFileName() + ")");
        }
        return new ClusterKey(Arrays.copyOf(bytes, end), file);
    }

    /** True when this is a real key (a file), false for {@link #none()}. */
    public boolean secret() {
        return file != null;
    }

    /** Where the key came from, for messages (never the key itself). */
    public String describe() {
        return file == null ? "no cluster key" : "the cluster key " + file;
    }

    static byte[] nonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    /** HMAC-SHA256 under the cluster key of the parts, each prefixed by its length (no two part lists collide). */
    byte[] mac(byte[]... parts) {
        return hmac(key, parts);
    }

    static byte[] hmac(byte[] key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            for (byte[] part : parts) {
                mac.update(new byte[] {(byte) (part.length >>> 24), (byte) (part.length >>> 16), (byte) (part.length >>> 8), (byte) part.length});
                mac.update(part);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    /** Constant-time comparison (the time taken does not tell how many leading bytes matched). */
    static boolean same(byte[] expected, byte[] given) {
        return MessageDigest.isEqual(expected, given);
    }

    static byte[] text(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] number(long value) {
        return java.nio.ByteBuffer.allocate(Long.BYTES).putLong(value).array();
    }
}
