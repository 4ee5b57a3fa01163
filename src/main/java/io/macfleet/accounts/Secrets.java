package io.macfleet.accounts;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/** Random session ids, CSRF and API tokens, and the hashes under which session ids and tokens are stored. */
final class Secrets {

    /** Prefix of API tokens, so that secret scanners and people recognise one in a paste or a log. */
    static final String TOKEN_PREFIX = "mft_";

    private static final SecureRandom RANDOM = new SecureRandom();

    private Secrets() {
    }

    /** 256 random bits, URL-safe Base64 without padding (43 characters). */
    static String randomToken() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static String newApiToken() {
        return TOKEN_PREFIX + randomToken();
    }

    /** SHA-256, hex. Enough for 256-bit random values: nobody can guess one from its hash. */
    static String hash(String secret) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** Equality whose time does not depend on where the two differ. */
    static boolean sameSecret(String expected, String given) {
        if (expected == null || given == null) {
            return false;
        }
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
    }
}
