package io.macfleet.simulator;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import org.apache.sshd.common.config.keys.writer.openssh.OpenSSHKeyPairResourceWriter;

/** SSH key pairs for simulated fleets: ECDSA P-256, written in OpenSSH format (readable by SSHJ and OpenSSH). */
public final class SshKeys {
    private SshKeys() {
    }

    public static KeyPair generate() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK cannot generate EC P-256 keys", e);
        }
    }

    /** Writes {@code privateKeyFile} (mode 600) and {@code privateKeyFile.pub}. */
    public static void write(KeyPair keyPair, Path privateKeyFile, String comment) throws IOException {
        Files.createDirectories(privateKeyFile.toAbsolutePath().getParent());
        Files.deleteIfExists(privateKeyFile);
        Files.createFile(privateKeyFile);
        try {
            Files.setPosixFilePermissions(privateKeyFile, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system; OpenSSH there does not check modes either.
        }
        try (OutputStream out = Files.newOutputStream(privateKeyFile)) {
            OpenSSHKeyPairResourceWriter.INSTANCE.writePrivateKey(keyPair, comment, null, out);
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot encode the private key: " + e.getMessage(), e);
        }
        try (OutputStream out = Files.newOutputStream(Path.of(privateKeyFile + ".pub"))) {
            OpenSSHKeyPairResourceWriter.INSTANCE.writePublicKey(keyPair.getPublic(), comment, out);
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot encode the public key: " + e.getMessage(), e);
        }
    }

    /** The public key as one authorized_keys / known_hosts line body ("ecdsa-sha2-nistp256 AAAA..."). */
    public static String publicKeyLine(java.security.PublicKey key) {
        try {
            var out = new java.io.ByteArrayOutputStream();
            OpenSSHKeyPairResourceWriter.INSTANCE.writePublicKey(key, null, out);
            return out.toString(java.nio.charset.StandardCharsets.US_ASCII).trim();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot encode public key", e);
        }
    }
}
