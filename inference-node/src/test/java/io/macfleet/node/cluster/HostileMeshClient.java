package io.macfleet.node.cluster;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * What an outsider on the network does to a rank's mesh port (the attacks of issue 29's probe), written from the
 * protocol, not through the node's own classes: the old handshake with guessed values, the new one with a wrong key,
 * and a hostile frame header. Every method returns what the rank said, so a test can check it said nothing.
 */
final class HostileMeshClient {
    /** What came back: the bytes the rank sent before it closed (or stopped talking), and whether it accepted. */
    record Outcome(byte[] received, boolean accepted, String text) {
        String asText() {
            return new String(received, StandardCharsets.ISO_8859_1);
        }
    }

    private HostileMeshClient() {
    }

    private static Socket open(String from, String host, int port) throws IOException {
        Socket socket = new Socket();
        socket.bind(new InetSocketAddress(from, 0));
        socket.connect(new InetSocketAddress(host, port), 2000);
        socket.setSoTimeout(5000);
        return socket;
    }

    /** The handshake of the node before issue 29: rank number and identity text, answered by accepted + text. */
    static Outcome legacy(String from, String host, int port, int claimedRank, String identity) throws IOException {
        try (Socket socket = open(from, host, port)) {
            DataOutputStream output = new DataOutputStream(socket.getOutputStream());
            output.writeInt(claimedRank);
            output.writeUTF(identity);
            output.flush();
            byte[] received = readAll(socket.getInputStream());
            return new Outcome(received, received.length > 0 && received[0] == 1, null);
        }
    }

    /** Raw bytes as the first thing on the connection (a frame header announcing 0x7FFFFFF0 bytes). */
    static Outcome raw(String from, String host, int port, byte[] bytes) throws IOException {
        try (Socket socket = open(from, host, port)) {
            socket.getOutputStream().write(bytes);
            socket.getOutputStream().flush();
            return new Outcome(readAll(socket.getInputStream()), false, null);
        }
    }

    /**
     * The current handshake from someone holding {@code key} (the real key: a rank; another: an attacker who
     * guessed). Returns what the accepting rank said; {@code accepted} only when it accepted the identity text.
     */
    static Outcome keyed(String from, String host, int port, int claimedRank, int toRank, ClusterKey key, String identity)
            throws IOException {
        try (Socket socket = open(from, host, port)) {
            DataOutputStream output = new DataOutputStream(socket.getOutputStream());
            DataInputStream input = new DataInputStream(socket.getInputStream());
            byte[] nonce = ClusterKey.nonce();
            output.writeInt(MeshHandshake.MAGIC);
            output.writeInt(claimedRank);
            output.writeInt(toRank);
            output.write(nonce);
            output.flush();
            ByteArrayOutputStream seen = new ByteArrayOutputStream();
            byte[] first = new byte[4 + 32 + 32];
            int got = readUpTo(input, first);
            seen.write(first, 0, got);
            if (got < first.length) {
                return new Outcome(seen.toByteArray(), false, null);
            }
            byte[] theirNonce = java.util.Arrays.copyOfRange(first, 4, 36);
            byte[] text = identity.getBytes(StandardCharsets.UTF_8);
            // an attacker cannot check the rank's proof without the key; it answers as if it could
            output.write(key.mac(ClusterKey.text("connect"), ClusterKey.number(claimedRank), ClusterKey.number(toRank),
                    theirNonce, nonce, text));
            output.writeInt(text.length);
            output.write(text);
            output.flush();
            byte[] rest = readAll(input);
            seen.write(rest);
            boolean accepted = rest.length > 5 && rest[0] == 1;
            String answer = rest.length > 5 ? new String(rest, 5, Math.max(0, rest.length - 5 - 32), StandardCharsets.UTF_8) : null;
            return new Outcome(seen.toByteArray(), accepted, answer);
        }
    }

    /**
     * A peer that holds the key (an insider, or a relay) completes the handshake as {@code claimedRank} and keeps
     * the connection: the caller then sends what it likes. Returns the open socket.
     */
    static Socket join(String from, String host, int port, int claimedRank, int toRank, ClusterKey key, String identity)
            throws IOException {
        Socket socket = open(from, host, port);
        DataOutputStream output = new DataOutputStream(socket.getOutputStream());
        DataInputStream input = new DataInputStream(socket.getInputStream());
        byte[] nonce = ClusterKey.nonce();
        output.writeInt(MeshHandshake.MAGIC);
        output.writeInt(claimedRank);
        output.writeInt(toRank);
        output.write(nonce);
        output.flush();
        input.readInt();
        byte[] theirNonce = input.readNBytes(32);
        input.readNBytes(32);
        byte[] text = identity.getBytes(StandardCharsets.UTF_8);
        output.write(key.mac(ClusterKey.text("connect"), ClusterKey.number(claimedRank), ClusterKey.number(toRank),
                theirNonce, nonce, text));
        output.writeInt(text.length);
        output.write(text);
        output.flush();
        if (!input.readBoolean()) {
            throw new IOException("not accepted");
        }
        input.readNBytes(input.readInt());
        input.readNBytes(32);
        return socket;
    }

    /** Bytes until the other side closes or is silent for the socket's timeout. */
    private static byte[] readAll(InputStream input) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        try {
            int read;
            while ((read = input.read(buffer)) >= 0) {
                out.write(buffer, 0, read);
                if (out.size() > 1 << 20) {
                    break;
                }
            }
        } catch (SocketTimeoutException | java.net.SocketException e) {
            // silent or reset: what we have is what it said
        }
        return out.toByteArray();
    }

    private static int readUpTo(InputStream input, byte[] into) throws IOException {
        int got = 0;
        try {
            while (got < into.length) {
                int read = input.read(into, got, into.length - got);
                if (read < 0) {
                    break;
                }
                got += read;
            }
        } catch (SocketTimeoutException | java.net.SocketException e) {
            // what we have
        }
        return got;
    }
}
