package io.macfleet.ssh;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A client of an OpenSSH-compatible ssh-agent over its Unix domain socket (draft-miller-ssh-agent), JDK only:
 * it lists the agent's identities and asks it to sign; private keys never leave the agent. One client holds
 * one agent connection; it is used by one SSH authentication at a time.
 */
final class SshAgentClient implements AutoCloseable {

    static final int SSH_AGENT_FAILURE = 5;
    static final int SSH_AGENTC_REQUEST_IDENTITIES = 11;
    static final int SSH_AGENT_IDENTITIES_ANSWER = 12;
    static final int SSH_AGENTC_SIGN_REQUEST = 13;
    static final int SSH_AGENT_SIGN_RESPONSE = 14;
    static final int SSH_AGENT_RSA_SHA2_256 = 2;
    static final int SSH_AGENT_RSA_SHA2_512 = 4;

    /** OpenSSH's agent refuses messages above 256 KiB; anything bigger is not an agent talking. */
    private static final int MAX_MESSAGE = 256 * 1024;

    /** One key the agent holds: its public key blob (RFC 4253 6.6 encoding) and the comment given by ssh-add. */
    record Identity(byte[] publicKeyBlob, String comment) {

        /** The key type named at the start of the blob: ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ... */
        String keyType() {
            return new Reader(publicKeyBlob).string();
        }

        /** SHA256:base64 without padding, as {@code ssh-add -l} prints it. */
        String fingerprint() {
            try {
                byte[] digest = MessageDigest.getInstance("SHA-256").digest(publicKeyBlob);
                return "SHA256:" + Base64.getEncoder().withoutPadding().encodeToString(digest);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is part of every JDK", e);
            }
        }

        /** Type, fingerprint and comment, for messages; the comment is usually the key file or user@host. */
        String describe() {
            return keyType() + " " + fingerprint() + (comment.isEmpty() ? "" : " (" + comment + ")");
        }
    }

    private final Path socket;
    private final SocketChannel channel;
    private final Duration timeout;

    private SshAgentClient(Path socket, SocketChannel channel, Duration timeout) {
        this.socket = socket;
        this.channel = channel;
        this.timeout = timeout;
    }

    /**
     * Connects to the agent's socket.
     *
     * @param timeout how long one answer of the agent may take; a hung agent must not hang a fleet run
     * @throws IOException when there is no agent listening there
     */
    static SshAgentClient connect(Path socket, Duration timeout) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        return new SshAgentClient(socket, channel, timeout);
    }

    Path socket() {
        return socket;
    }

    /** The identities the agent offers, in its order (OpenSSH: the order they were added). */
    List<Identity> identities() throws IOException {
        Reader answer = exchange(new byte[]{SSH_AGENTC_REQUEST_IDENTITIES}, SSH_AGENT_IDENTITIES_ANSWER,
                "listing identities");
        try {
            long count = answer.uint32();
            if (count > MAX_MESSAGE) {
                throw new IOException("the ssh-agent at " + socket + " announced " + count + " identities: not an agent answer");
            }
            List<Identity> identities = new ArrayList<>((int) count);
            for (long i = 0; i < count; i++) {
                byte[] blob = answer.bytes();
                String comment = new String(answer.bytes(), StandardCharsets.UTF_8);
                identities.add(new Identity(blob, comment));
            }
            return List.copyOf(identities);
        } catch (IllegalStateException e) {
            throw new IOException("the ssh-agent at " + socket + " sent a malformed identity list: " + e.getMessage(), e);
        }
    }

    /**
     * Asks the agent to sign data with one of its keys.
     *
     * @param flags {@link #SSH_AGENT_RSA_SHA2_256} or {@link #SSH_AGENT_RSA_SHA2_512} for RSA keys, 0 otherwise
     * @return the signature blob as SSH puts it on the wire: string algorithm, string signature
     * @throws IOException when the agent refuses (a confirm-only key declined, the key removed meanwhile) or breaks
     */
    byte[] sign(Identity identity, byte[] data, int flags) throws IOException {
        Writer request = new Writer();
        request.out.write(SSH_AGENTC_SIGN_REQUEST);
        request.bytes(identity.publicKeyBlob());
        request.bytes(data);
        request.uint32(flags);
        Reader answer = exchange(request.out.toByteArray(), SSH_AGENT_SIGN_RESPONSE, "signing with " + identity.describe());
        try {
            return answer.bytes();
        } catch (IllegalStateException e) {
            throw new IOException("the ssh-agent at " + socket + " sent a malformed signature: " + e.getMessage(), e);
        }
    }

    private Reader exchange(byte[] message, int expected, String what) throws IOException {
        // Blocking Unix socket reads have no timeout of their own: a watchdog closes the channel instead.
        AtomicBoolean timedOut = new AtomicBoolean();
        Thread watchdog = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(timeout);
            } catch (InterruptedException answered) {
                return;
            }
            timedOut.set(true);
            try {
                channel.close();
            } catch (IOException ignored) {
                // Closing is all we wanted; the reader sees the channel closed either way.
            }
        });
        try {
            ByteBuffer out = ByteBuffer.allocate(4 + message.length).putInt(message.length).put(message).flip();
            while (out.hasRemaining()) {
                channel.write(out);
            }
            ByteBuffer length = readFully(ByteBuffer.allocate(4));
            int size = length.flip().getInt();
            if (size < 1 || size > MAX_MESSAGE) {
                throw new IOException("the ssh-agent at " + socket + " sent a message of " + Integer.toUnsignedString(size)
                        + " bytes while " + what + ": not an agent answer");
            }
            byte[] body = readFully(ByteBuffer.allocate(size)).array();
            int type = body[0] & 0xff;
            if (type == SSH_AGENT_FAILURE) {
                throw new IOException("the ssh-agent at " + socket + " refused " + what);
            }
            if (type != expected) {
                throw new IOException("the ssh-agent at " + socket + " answered message type " + type + " while "
                        + what + ", expected " + expected);
            }
            return new Reader(body, 1);
        } catch (IOException e) {
            if (timedOut.get()) {
                throw new IOException("the ssh-agent at " + socket + " did not answer within " + timeout.toMillis()
                        + " ms while " + what, e);
            }
            throw e;
        } finally {
            watchdog.interrupt();
        }
    }

    private ByteBuffer readFully(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                throw new IOException("the ssh-agent at " + socket + " closed the connection");
            }
        }
        return buffer;
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Nothing is left to release.
        }
    }

    /** Reads the SSH wire encoding (RFC 4251 5): uint32 big-endian, string = uint32 length + bytes. */
    static final class Reader {
        private final ByteBuffer buffer;

        Reader(byte[] data) {
            this(data, 0);
        }

        Reader(byte[] data, int offset) {
            buffer = ByteBuffer.wrap(data, offset, data.length - offset);
        }

        long uint32() {
            if (buffer.remaining() < 4) {
                throw new IllegalStateException("truncated ssh-agent message");
            }
            return Integer.toUnsignedLong(buffer.getInt());
        }

        byte[] bytes() {
            long length = uint32();
            if (length > buffer.remaining()) {
                throw new IllegalStateException("truncated ssh-agent message");
            }
            byte[] value = new byte[(int) length];
            buffer.get(value);
            return value;
        }

        String string() {
            return new String(bytes(), StandardCharsets.UTF_8);
        }
    }

    private static final class Writer {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        void uint32(long value) {
            out.write((int) (value >>> 24));
            out.write((int) (value >>> 16));
            out.write((int) (value >>> 8));
            out.write((int) value);
        }

        void bytes(byte[] value) {
            uint32(value.length);
            out.writeBytes(value);
        }
    }
}
