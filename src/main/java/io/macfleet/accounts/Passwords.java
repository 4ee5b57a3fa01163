package io.macfleet.accounts;

import io.quarkus.elytron.security.common.BcryptUtil;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.spec.InvalidKeySpecException;
import org.wildfly.security.password.interfaces.BCryptPassword;
import org.wildfly.security.password.util.ModularCrypt;

/** Password rules and bcrypt hashing (Quarkus' Elytron bcrypt, cost 11: about 0.1 to 0.2 s per check here). */
final class Passwords {

    static final int MINIMUM_LENGTH = 12;
    /** bcrypt reads at most 72 bytes; a longer password is refused rather than silently cut. */
    static final int MAXIMUM_BYTES = 72;
    private static final int COST = 11;

    /**
     * Verified when the user name is unknown, so that a login attempt for a missing user costs the same time as
     * one for an existing user and does not reveal which names exist.
     */
    private static final String UNKNOWN_USER_HASH = BcryptUtil.bcryptHash(Secrets.randomToken(), COST);

    private Passwords() {
    }

    /** Throws with a message saying what is wrong; never includes the password. */
    static void check(String password) {
        if (password == null || password.isEmpty()) {
            throw AccountException.invalid("the password is empty");
        }
        if (password.codePointCount(0, password.length()) < MINIMUM_LENGTH) {
            throw AccountException.invalid("the password is too short: at least " + MINIMUM_LENGTH + " characters");
        }
        if (password.getBytes(StandardCharsets.UTF_8).length > MAXIMUM_BYTES) {
            throw AccountException.invalid("the password is too long: at most " + MAXIMUM_BYTES + " bytes (bcrypt ignores the rest)");
        }
        if (password.strip().length() != password.length()) {
            throw AccountException.invalid("the password starts or ends with white space (a pasted line end?)");
        }
        CommonPasswords.weakness(password).ifPresent(reason -> {
            throw AccountException.invalid("the password is too easy to guess: " + reason);
        });
    }

    static String hash(String password) {
        return BcryptUtil.bcryptHash(password, COST);
    }

    /**
     * Hashes the password again with the stored salt and cost and compares the two in constant time. A missing
     * hash (unknown user) or an empty password costs the same bcrypt time and fails.
     */
    static boolean matches(String password, String hash) {
        boolean known = hash != null && password != null && !password.isEmpty();
        String stored = known ? hash : UNKNOWN_USER_HASH;
        BCryptPassword parsed;
        try {
            parsed = (BCryptPassword) ModularCrypt.decode(stored);
        } catch (InvalidKeySpecException | ClassCastException e) {
            throw new IllegalStateException("a stored password hash is not a bcrypt hash", e);
        }
        String computed = BcryptUtil.bcryptHash(password == null || password.isEmpty() ? "-" : password, parsed.getIterationCount(), parsed.getSalt());
        return MessageDigest.isEqual(computed.getBytes(StandardCharsets.US_ASCII), stored.getBytes(StandardCharsets.US_ASCII)) && known;
    }
}
