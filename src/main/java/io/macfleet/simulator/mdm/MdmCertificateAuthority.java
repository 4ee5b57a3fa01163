package io.macfleet.simulator.mdm;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A throw-away CA for simulated Macs' device identity certificates, the certificates a real Mac gets from its
 * enrollment profile (SCEP or ACME) and presents on every MDM request. NanoHUB is started with this CA as {@code -ca}
 * and takes each device's certificate from a header ({@code -cert-header}, RFC 9440 form). The JDK signs but has no
 * public certificate builder and Bouncy Castle is not on the class path, so the few DER structures of RFC 5280 are
 * written here ({@link Der}); keys are P-256, signatures ECDSA with SHA-256.
 */
public final class MdmCertificateAuthority {
    private static final byte[] ECDSA_SHA256 = Der.sequence(Der.oid("1.2.840.10045.4.3.2"));
    private static final Duration VALIDITY = Duration.ofDays(30);

    private final byte[] name;
    private final PrivateKey key;
    private final X509Certificate certificate;
    private final AtomicLong serials = new AtomicLong(2);

    private MdmCertificateAuthority(byte[] name, PrivateKey key, X509Certificate certificate) {
        this.name = name;
        this.key = key;
        this.certificate = certificate;
    }

    /** A new CA with a fresh key; nothing is written anywhere. */
    public static MdmCertificateAuthority create(String commonName) {
        KeyPair keys = keyPair();
        byte[] name = name(commonName);
        byte[] extensions = Der.sequence(
                extension("2.5.29.19", true, Der.sequence(Der.bool(true))),              // basicConstraints: CA
                extension("2.5.29.15", true, Der.bitString(1, (byte) 0x06)));            // keyUsage: keyCertSign, cRLSign
        X509Certificate certificate = sign(name, name, keys.getPublic(), keys.getPrivate(), BigInteger.ONE, extensions);
        return new MdmCertificateAuthority(name, keys.getPrivate(), certificate);
    }

    public X509Certificate certificate() {
        return certificate;
    }

    /** The CA as PEM, for NanoHUB's {@code -ca} file. */
    public String pem() {
        return pem(certificate);
    }

    /** A device identity certificate (client authentication) for {@code commonName}, with its own new key. */
    public X509Certificate issueDevice(String commonName) {
        KeyPair keys = keyPair();
        byte[] extensions = Der.sequence(
                extension("2.5.29.19", false, Der.sequence()),                                // basicConstraints: not a CA
                extension("2.5.29.15", true, Der.bitString(5, (byte) 0xA0)),                  // digitalSignature, keyEncipherment
                extension("2.5.29.37", false, Der.sequence(Der.oid("1.3.6.1.5.5.7.3.2")))); // extKeyUsage: clientAuth
        return sign(name, name(commonName), keys.getPublic(), key, BigInteger.valueOf(serials.getAndIncrement()), extensions);
    }

    /** RFC 9440's Client-Cert form: {@code :base64(DER):}. */
    public static String rfc9440(X509Certificate certificate) {
        try {
            return ":" + Base64.getEncoder().encodeToString(certificate.getEncoded()) + ":";
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static String pem(X509Certificate certificate) {
        try {
            return "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(certificate.getEncoded())
                    + "\n-----END CERTIFICATE-----\n";
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static KeyPair keyPair() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no P-256 key generator in this JDK", e);
        }
    }

    private static byte[] name(String commonName) {
        return Der.sequence(Der.set(Der.sequence(Der.oid("2.5.4.3"), Der.utf8(commonName))));
    }

    private static byte[] extension(String oid, boolean critical, byte[] value) {
        return critical ? Der.sequence(Der.oid(oid), Der.bool(true), Der.octets(value)) : Der.sequence(Der.oid(oid), Der.octets(value));
    }

    /** RFC 5280's TBSCertificate, signed by {@code issuerKey}. */
    private static X509Certificate sign(byte[] issuer, byte[] subject, PublicKey subjectKey, PrivateKey issuerKey, BigInteger serial, byte[] extensions) {
        try {
            Instant now = Instant.now();
            byte[] tbs = Der.sequence(
                    Der.explicit(0, Der.integer(BigInteger.TWO)),
                    Der.integer(serial),
                    ECDSA_SHA256,
                    issuer,
                    Der.sequence(Der.utcTime(now.minus(Duration.ofHours(1))), Der.utcTime(now.plus(VALIDITY))),
                    subject,
                    subjectKey.getEncoded(),
                    Der.explicit(3, extensions));
            Signature signature = Signature.getInstance("SHA256withECDSA");
            signature.initSign(issuerKey);
            signature.update(tbs);
            byte[] der = Der.sequence(tbs, ECDSA_SHA256, Der.bitString(0, signature.sign()));
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("signing a test certificate failed", e);
        }
    }

    /** The DER encodings RFC 5280 certificates need (X.690), nothing more. */
    static final class Der {
        private static final DateTimeFormatter UTC_TIME = DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'").withZone(ZoneOffset.UTC);

        private Der() {
        }

        static byte[] sequence(byte[]... parts) {
            return tagged(0x30, concat(parts));
        }

        static byte[] set(byte[]... parts) {
            return tagged(0x31, concat(parts));
        }

        static byte[] explicit(int number, byte[] content) {
            return tagged(0xA0 | number, content);
        }

        static byte[] integer(BigInteger value) {
            return tagged(0x02, value.toByteArray());
        }

        static byte[] bool(boolean value) {
            return tagged(0x01, new byte[] {(byte) (value ? 0xFF : 0x00)});
        }

        static byte[] octets(byte[] value) {
            return tagged(0x04, value);
        }

        static byte[] utf8(String value) {
            return tagged(0x0C, value.getBytes(StandardCharsets.UTF_8));
        }

        static byte[] utcTime(Instant instant) {
            return tagged(0x17, UTC_TIME.format(instant).getBytes(StandardCharsets.US_ASCII));
        }

        static byte[] bitString(int unusedBits, byte... bits) {
            byte[] content = new byte[bits.length + 1];
            content[0] = (byte) unusedBits;
            System.arraycopy(bits, 0, content, 1, bits.length);
            return tagged(0x03, content);
        }

        static byte[] oid(String dotted) {
            String[] arcs = dotted.split("\\.");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(Integer.parseInt(arcs[0]) * 40 + Integer.parseInt(arcs[1]));
            for (int i = 2; i < arcs.length; i++) {
                long arc = Long.parseLong(arcs[i]);
                int groups = Math.max(1, (64 - Long.numberOfLeadingZeros(arc) + 6) / 7);
                for (int group = groups - 1; group >= 0; group--) {
                    out.write((int) ((arc >>> (7 * group)) & 0x7F) | (group > 0 ? 0x80 : 0));
                }
            }
            return tagged(0x06, out.toByteArray());
        }

        private static byte[] tagged(int tag, byte[] content) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(tag);
            int length = content.length;
            if (length < 0x80) {
                out.write(length);
            } else {
                int bytes = (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
                out.write(0x80 | bytes);
                for (int i = bytes - 1; i >= 0; i--) {
                    out.write(length >>> (8 * i));
                }
            }
            out.writeBytes(content);
            return out.toByteArray();
        }

        private static byte[] concat(byte[]... parts) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (byte[] part : parts) {
                out.writeBytes(part);
            }
            return out.toByteArray();
        }
    }
}
