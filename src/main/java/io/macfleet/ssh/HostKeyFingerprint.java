package io.macfleet.ssh;

import net.schmizz.sshj.common.Buffer;
import net.schmizz.sshj.common.KeyType;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * SHA-256 host key fingerprints in the form OpenSSH prints them ({@code SHA256:} and unpadded base64 of the
 * SHA-256 of the key's SSH wire encoding), so an operator can compare them with {@code ssh-keygen -lf}.
 */
public final class HostKeyFingerprint {

    private static final Pattern FORM = Pattern.compile("SHA256:[A-Za-z0-9+/]{43}");

    private HostKeyFingerprint() {
    }

    public static String of(PublicKey key) {
        byte[] blob = new Buffer.PlainBuffer().putPublicKey(key).getCompactData();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(blob);
            return "SHA256:" + Base64.getEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JDK", e);
        }
    }

    /** The SSH key type name, e.g. {@code ssh-ed25519}, {@code ecdsa-sha2-nistp256}, {@code ssh-rsa}. */
    public static String keyType(PublicKey key) {
        return KeyType.fromKey(key).toString();
    }

    /** Accepts {@code SHA256:xxx} with or without base64 padding; empty when the text is no such fingerprint. */
    public static Optional<String> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        String trimmed = text.strip();
        while (trimmed.endsWith("=")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return FORM.matcher(trimmed).matches() ? Optional.of(trimmed) : Optional.empty();
    }
}
