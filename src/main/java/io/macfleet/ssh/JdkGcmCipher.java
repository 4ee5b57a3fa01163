package io.macfleet.ssh;

import com.hierynomus.sshj.transport.cipher.GcmCipher;
import java.security.GeneralSecurityException;
import net.schmizz.sshj.common.Factory;
import net.schmizz.sshj.common.SSHRuntimeException;
import net.schmizz.sshj.transport.cipher.Cipher;

/**
 * SSHJ's AES-GCM ({@code aes128-gcm@openssh.com}, {@code aes256-gcm@openssh.com}) computed by the JDK's own provider.
 * SSHJ asks its security provider for the cipher, which is BouncyCastle whenever BouncyCastle is on the class path (as
 * here): AES and GHASH in plain Java, about 40% of all CPU samples of a model copy (JFR, FileCopyBenchmark). The JDK's
 * SunJCE implementation of the same transformation runs on the CPU's AES and carry-less multiply instructions. Only
 * the provider changes: SSHJ's packet handling, nonce counter and tag checks are its own.
 */
final class JdkGcmCipher extends GcmCipher {

    private static final String TRANSFORMATION = "AES/GCM/NoPadding";

    private JdkGcmCipher(int keyBytes) {
        // SSHJ's values for both variants (GcmCiphers): 12-byte nonce, 16-byte tag.
        super(12, 16, keyBytes, "AES", TRANSFORMATION);
    }

    @Override
    public void init(Mode mode, byte[] key, byte[] iv) {
        super.init(mode, key, iv);
        try {
            cipher = javax.crypto.Cipher.getInstance(TRANSFORMATION, "SunJCE");
        } catch (GeneralSecurityException e) {
            throw new SSHRuntimeException("the JDK has no " + TRANSFORMATION, e);
        }
        // SSHJ initialises its cipher on first use, with the key and nonce kept by super.init.
        initialized = false;
    }

    /** The factory SSHJ's configuration lists, under the same names as its own. */
    static Factory.Named<Cipher> factory(String name, int keyBits) {
        return new Factory.Named<>() {
            @Override
            public Cipher create() {
                return new JdkGcmCipher(keyBits / 8);
            }

            @Override
            public String getName() {
                return name;
            }

            @Override
            public String toString() {
                return name + " (JDK)";
            }
        };
    }
}
