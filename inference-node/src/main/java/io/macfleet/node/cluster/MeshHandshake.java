package io.macfleet.node.cluster;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * How two ranks prove to each other that they belong to the same cluster before either says anything about itself.
 * The connecting rank C (the higher number) and the accepting rank A:
 * <ol>
 *   <li>C to A: magic, C, A, C's nonce. A closes the connection without a word unless C is a rank above A, the
 *       connection comes from one of C's addresses in the cluster file, and the magic is right.</li>
 *   <li>A to C: magic, A's nonce, HMAC(key; "accept", C, A, C's nonce, A's nonce). C checks it (constant time).</li>
 *   <li>C to A: HMAC(key; "connect", C, A, A's nonce, C's nonce, C's identity text), the text. A checks the MAC
 *       before it reads the text as anything.</li>
 *   <li>A to C: accepted or not, A's identity text or the difference it found, HMAC(key; "answer", ...).</li>
 * </ol>
 * Both then derive the connection's heartbeat key, HMAC(key; "heartbeat", C, A, both nonces). A peer that does not
 * hold the key learns A's nonce and a MAC over nonces, nothing else: no version, model size or hash, no plan. Fresh
 * nonces on both sides make a recorded exchange worthless for a later one; the labels keep an answer from being
 * reflected as a request. The messages after the handshake are not authenticated one by one (see docs/security.md).
 */
final class MeshHandshake {
    static final int MAGIC = 0x4D464D32; // "MFM2"
    /** A peer's handshake messages are a few hundred bytes written at once; a peer that takes longer is not a rank. */
    static final int READ_TIMEOUT_MILLIS = 3000;
    static final int MAXIMUM_TEXT_BYTES = 65536;
    private static final int MAC_BYTES = 32;

    /** A formed connection to {@code peer} and the key its heartbeats carry. */
    record Connection(int peer, SocketChannel channel, byte[] heartbeatKey) {
    }

    /** The outcome of one incoming connection: a connection, a refusal (said to an authenticated peer), or neither. */
    record Accepted(Connection connection, String refusal) {
    }

    private final ClusterFile cluster;
    private final ClusterAddresses addresses;
    private final ClusterKey key;
    private final int rank;
    private final Handshake mine;

    MeshHandshake(ClusterFile cluster, ClusterAddresses addresses, ClusterKey key, int rank, Handshake mine) {
        this.cluster = cluster;
        this.addresses = addresses;
        this.key = key;
        this.rank = rank;
        this.mine = mine;
    }

    /**
     * Connects to a lower rank. Null when it is not there yet, went away, or did not prove the key (try again: an
     * impostor on the port must not stop the cluster for good); throws {@link TcpTransport.HandshakeRefusedException}
     * when the authenticated peer runs something else.
     */
    Connection connect(int peer, java.util.function.Consumer<String> status) throws IOException {
        InetSocketAddress address = new InetSocketAddress(cluster.addressOf(rank, peer), cluster.rank(peer).clusterPort());
        SocketChannel channel = SocketChannel.open();
        try {
            // from the address the peer expects this rank at (its own end of their link, or its management address)
            channel.bind(new InetSocketAddress(ClusterAddresses.resolve(cluster.sourceAddress(rank, peer), rank), 0));
            channel.socket().connect(address, 2000);
            configure(channel);
            DataOutputStream output = new DataOutputStream(channel.socket().getOutputStream());
            DataInputStream input = new DataInputStream(channel.socket().getInputStream());
            byte[] mineNonce = ClusterKey.nonce();
            output.writeInt(MAGIC);
            output.writeInt(rank);
            output.writeInt(peer);
            output.write(mineNonce);
            output.flush();
            if (input.readInt() != MAGIC) {
                status.accept("rank " + peer + " at " + where(address) + " does not speak this mesh protocol (an older node, or not a rank)");
                channel.close();
                return null;
            }
            byte[] theirNonce = read(input, ClusterKey.NONCE_BYTES);
            byte[] proof = read(input, MAC_BYTES);
            if (!ClusterKey.same(key.mac(label("accept"), number(rank), number(peer), mineNonce, theirNonce), proof)) {
                status.accept("rank " + peer + " at " + where(address) + " did not prove " + key.describe()
                        + " (another key, or not a rank of this cluster)");
                System.err.println("inference-node: rank " + rank + ": the listener at " + where(address)
                        + " did not prove " + key.describe() + "; not talking to it");
                channel.close();
                return null;
            }
            byte[] text = ClusterKey.text(mine.text());
            output.write(key.mac(label("connect"), number(rank), number(peer), theirNonce, mineNonce, text));
            output.writeInt(text.length);
            output.write(text);
            output.flush();
            boolean accepted = input.readBoolean();
            int length = input.readInt();
            if (length < 0 || length > MAXIMUM_TEXT_BYTES) {
                channel.close();
                return null;
            }
            byte[] answer = read(input, length);
            byte[] answerProof = read(input, MAC_BYTES);
            if (!ClusterKey.same(key.mac(label("answer"), number(peer), number(rank), mineNonce, theirNonce,
                    new byte[] {(byte) (accepted ? 1 : 0)}, answer), answerProof)) {
                channel.close();
                return null;
            }
            String answerText = new String(answer, StandardCharsets.UTF_8);
            if (!accepted) {
                throw new TcpTransport.HandshakeRefusedException("rank " + peer + " refused this rank (" + rank + "): " + answerText);
            }
            String difference = mine.difference(Handshake.parse(answerText), rank, peer);
            if (difference != null) {
                throw new TcpTransport.HandshakeRefusedException(difference);
            }
            channel.socket().setSoTimeout(0);
            return new Connection(peer, channel, heartbeatKey(rank, peer, mineNonce, theirNonce));
        } catch (IOException e) {
            channel.close();
            return null; // not listening yet, or went away during the handshake: try again
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Answers an incoming connection; never throws for what the caller sends. */
    Accepted accept(SocketChannel channel) throws IOException {
        String from = "?";
        try {
            InetAddress remote = ((InetSocketAddress) channel.getRemoteAddress()).getAddress();
            from = remote.getHostAddress();
            if (!fromHigherRank(remote)) {
                // before reading a byte: an outsider cannot even hold the forming thread for the read timeout
                return ignore(channel, from, "not an address of a rank this rank accepts");
            }
            channel.configureBlocking(true);
            configure(channel);
            DataInputStream input = new DataInputStream(channel.socket().getInputStream());
            DataOutputStream output = new DataOutputStream(channel.socket().getOutputStream());
            int magic = input.readInt();
            if (magic != MAGIC) {
                return ignore(channel, from, "not this mesh protocol");
            }
            int peer = input.readInt();
            int to = input.readInt();
            if (to != rank || peer <= rank || peer >= cluster.size() || !addresses.allowed(peer, remote)) {
                return ignore(channel, from, "not a rank this rank accepts from that address (said rank " + peer + " to rank " + to + ")");
            }
            byte[] theirNonce = read(input, ClusterKey.NONCE_BYTES);
            byte[] mineNonce = ClusterKey.nonce();
            output.writeInt(MAGIC);
            output.write(mineNonce);
            output.write(key.mac(label("accept"), number(peer), number(rank), theirNonce, mineNonce));
            output.flush();
            byte[] proof = read(input, MAC_BYTES);
            int length = input.readInt();
            if (length < 0 || length > MAXIMUM_TEXT_BYTES) {
                return ignore(channel, from, "a handshake of " + length + " bytes");
            }
            byte[] text = read(input, length);
            if (!ClusterKey.same(key.mac(label("connect"), number(peer), number(rank), mineNonce, theirNonce, text), proof)) {
                return ignore(channel, from, "it did not prove " + key.describe() + " (said rank " + peer + ")");
            }
            String difference = mine.difference(Handshake.parse(new String(text, StandardCharsets.UTF_8)), rank, peer);
            byte[] answer = ClusterKey.text(difference == null ? mine.text() : difference);
            output.writeBoolean(difference == null);
            output.writeInt(answer.length);
            output.write(answer);
            output.write(key.mac(label("answer"), number(rank), number(peer), theirNonce, mineNonce,
                    new byte[] {(byte) (difference == null ? 1 : 0)}, answer));
            output.flush();
            if (difference != null) {
                channel.close();
                System.err.println("inference-node: refused rank " + peer + ": " + difference);
                return new Accepted(null, "refused rank " + peer + ": " + difference);
            }
            channel.socket().setSoTimeout(0);
            return new Accepted(new Connection(peer, channel, heartbeatKey(peer, rank, theirNonce, mineNonce)), null);
        } catch (IOException | RuntimeException e) {
            return ignore(channel, from, "the handshake failed (" + e.getClass().getSimpleName() + ")");
        }
    }

    private boolean fromHigherRank(InetAddress remote) {
        for (int peer = rank + 1; peer < cluster.size(); peer++) {
            if (addresses.allowed(peer, remote)) {
                return true;
            }
        }
        return false;
    }

    private static Accepted ignore(SocketChannel channel, String from, String why) throws IOException {
        channel.close();
        System.err.println("inference-node: closed a mesh connection from " + from + ": " + why);
        return new Accepted(null, null);
    }

    private byte[] heartbeatKey(int connecting, int accepting, byte[] connectingNonce, byte[] acceptingNonce) {
        return key.mac(label("heartbeat"), number(connecting), number(accepting), connectingNonce, acceptingNonce);
    }

    private static void configure(SocketChannel channel) throws IOException {
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
        channel.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        channel.socket().setSoTimeout(READ_TIMEOUT_MILLIS);
    }

    private static byte[] read(DataInputStream input, int length) throws IOException {
        byte[] bytes = new byte[length];
        input.readFully(bytes);
        return bytes;
    }

    private static byte[] label(String value) {
        return ClusterKey.text(value);
    }

    private static byte[] number(int value) {
        return ClusterKey.number(value);
    }

    private static String where(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }
}
