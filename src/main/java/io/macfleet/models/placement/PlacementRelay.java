package io.macfleet.models.placement;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * macfleet's model placement relay: one Mac's link in the chain that passes a model file from Mac to Mac over their
 * Thunderbolt addresses. It uses nothing but the JDK (a test checks its imports): {@link RelayJar} packs its classes,
 * compiled with macfleet, into a small jar that the Mac's own {@code java} runs ({@code java -jar placement-relay.jar
 * ...}), started by macfleet as a temporary launch daemon that is removed when the placement ends. Nothing else of
 * macfleet is on its class path.
 *
 * <p>It listens on exactly one address (its end of the cable toward its upstream peer, or its management address for
 * the first Mac, which the control host feeds), never a wildcard, and talks only to a peer that proves the
 * placement's key (a mutual HMAC-SHA256 challenge over fresh nonces, the idea of the inference node's mesh handshake).
 * Per upstream connection (a session) it receives one file: the header (path under --root, size, SHA-256, chunk size,
 * whether to store it, the rest of the chain), connects to the next Mac and passes the header on, reports how much of
 * the file's {@code .partial} it holds (whole chunks), receives the bytes from the offset the control host chose,
 * forwards each block downstream before writing it (pipelined: the next Mac receives while this one still does),
 * writes what it lacks, and renames the {@code .partial} into place only when the SHA-256 of the whole file matches.
 *
 * <p>Upstream it sends text lines, its own and its downstream's: {@code have NAME BYTES}, {@code progress NAME
 * BYTES}, {@code done NAME WRITTEN RESENT}, {@code forwarded NAME}, {@code fail NAME disk AT SIZE message}, {@code fail
 * NAME hash ACTUAL PATH}, {@code fail NAME source message} (a source could not read its copy), {@code lost NAME message}
 * (a downstream peer went away: the control host ends the round, every Mac keeps its {@code .partial}, the next round
 * resumes). A Mac whose disk fails keeps forwarding.
 *
 * <p>A <em>source</em> (the header says so; only the first Mac of a chain, for a model a Mac holds, {@code model add
 * --via}) reads the file from its own disk at the path, from the start offset the control host sends, and forwards it
 * without writing; the control host sends no byte of it and ends the round by closing its connection.
 *
 * <p>Arguments: {@code --name NAME --listen ADDRESS --port PORT --key FILE --root DIRECTORY [--from ADDRESS]}.
 * {@link RelayClient} speaks the control host's side with this class's handshake.
 */
public final class PlacementRelay {
    static final int MAGIC = 0x4D465031; // "MFP1"
    static final int NONCE_BYTES = 32;
    static final int MAC_BYTES = 32;
    static final int BLOCK_BYTES = 256 * 1024;
    /**
     * Small socket buffers keep each Mac within about a block or two of its upstream peer, so after an interruption the
     * Macs' partial files differ by less than one chunk and a resume sends at most one chunk again per Mac.
     */
    static final int SOCKET_BUFFER_BYTES = 256 * 1024;
    static final int HANDSHAKE_TIMEOUT_MILLIS = 10_000;
    static final int DATA_TIMEOUT_MILLIS = 120_000;
    static final int MAXIMUM_HOPS = 1024;
    /** How long a refused connection to the next Mac is tried again (its relay's JVM starts in a few seconds). */
    static final long CONNECT_WINDOW_MILLIS = 30_000;

    private final String name;
    private final InetAddress listen;
    private final int port;
    private final byte[] key;
    private final Path root;
    private final String from;

    PlacementRelay(String name, InetAddress listen, int port, byte[] key, Path root, String from) {
        this.name = name;
        this.listen = listen;
        this.port = port;
        this.key = key;
        this.root = root;
        this.from = from;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int index = 0; index + 1 < args.length; index += 2) {
            if (!args[index].startsWith("--")) {
                fail("unexpected argument " + args[index]);
            }
            options.put(args[index].substring(2), args[index + 1]);
        }
        for (String required : List.of("name", "listen", "port", "key", "root")) {
            if (!options.containsKey(required)) {
                fail("--" + required + " is missing");
            }
        }
        InetAddress listen = InetAddress.getByName(options.get("listen"));
        if (listen.isAnyLocalAddress()) {
            fail("refusing to listen on the wildcard address " + options.get("listen") + ": give the Mac's own address toward its upstream peer");
        }
        byte[] key = Files.readAllBytes(Path.of(options.get("key")));
        if (key.length < 32) {
            fail("the key file " + options.get("key") + " holds " + key.length + " bytes, expected at least 32");
        }
        Path root = Path.of(options.get("root")).toAbsolutePath().normalize();
        new PlacementRelay(options.get("name"), listen, Integer.parseInt(options.get("port")), key, root, options.get("from")).serve();
    }

    private static void fail(String message) {
        System.err.println("placement-relay: " + message);
        System.exit(2);
    }

    private static void log(String message) {
        System.err.println("placement-relay: " + message);
    }

    void serve() throws IOException {
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.setReceiveBufferSize(SOCKET_BUFFER_BYTES);
            try {
                server.bind(new InetSocketAddress(listen, port), 4);
            } catch (IOException e) {
                // One line that says why (launchd starts it again; macfleet shows the end of this log).
                fail("cannot listen on " + listen.getHostAddress() + ":" + port + ": " + e.getMessage());
            }
            log(name + " listening on " + listen.getHostAddress() + ":" + port);
            while (true) {
                Socket upstream = server.accept();
                try {
                    session(upstream);
                } catch (Exception e) {
                    log(name + ": session ended: " + e);
                } finally {
                    closeQuietly(upstream);
                }
            }
        }
    }

    /** A Mac further down the chain, as the header names it. */
    record Hop(String name, String address, int port, String bindAddress, boolean store) {
    }

    /**
     * One file's transfer, as the upstream peer announces it.
     *
     * @param source this Mac holds the file verified at {@code path} and feeds the chain from its own disk (the control
     *               host sends only the start offset); only ever the first Mac of a chain, which then does not store
     */
    record Header(String path, long size, String sha256, int chunkBytes, boolean store, boolean source, List<Hop> hops) {

        static Header read(DataInputStream input) throws IOException {
            String path = input.readUTF();
            long size = input.readLong();
            String sha256 = input.readUTF();
            int chunk = input.readInt();
            boolean store = input.readBoolean();
            boolean source = input.readBoolean();
            int count = input.readInt();
            if (count < 0 || count > MAXIMUM_HOPS || size < 0 || chunk <= 0 || !sha256.matches("[0-9a-f]{64}") || source && store) {
                throw new IOException("malformed header");
            }
            List<Hop> hops = new ArrayList<>();
            for (int index = 0; index < count; index++) {
                hops.add(new Hop(input.readUTF(), input.readUTF(), input.readInt(), input.readUTF(), input.readBoolean()));
            }
            return new Header(path, size, sha256, chunk, store, source, hops);
        }

        void write(DataOutputStream output, boolean storeThere, List<Hop> rest) throws IOException {
            output.writeUTF(path);
            output.writeLong(size);
            output.writeUTF(sha256);
            output.writeInt(chunkBytes);
            output.writeBoolean(storeThere);
            // Only the first Mac of a chain is ever a source: the Macs after it receive the bytes.
            output.writeBoolean(false);
            output.writeInt(rest.size());
            for (Hop hop : rest) {
                output.writeUTF(hop.name());
                output.writeUTF(hop.address());
                output.writeInt(hop.port());
                output.writeUTF(hop.bindAddress());
                output.writeBoolean(hop.store());
            }
        }
    }

    /** Lines to the upstream peer, from this relay and from the downstream reader thread. */
    static final class Lines {
        private final OutputStream output;
        private volatile boolean broken;

        Lines(OutputStream output) {
            this.output = output;
        }

        synchronized void send(String line) {
            if (broken) {
                return;
            }
            try {
                output.write((line.replace('\n', ' ') + "\n").getBytes(StandardCharsets.UTF_8));
                output.flush();
            } catch (IOException e) {
                // The upstream went away; the data read will end the session.
                broken = true;
            }
        }
    }

    private void session(Socket upstream) throws Exception {
        String peer = upstream.getInetAddress().getHostAddress();
        if (from != null && !from.equals(peer)) {
            log(name + ": refused a connection from " + peer + " (expecting the upstream peer at " + from + ")");
            return;
        }
        upstream.setSoTimeout(HANDSHAKE_TIMEOUT_MILLIS);
        configure(upstream);
        DataInputStream input = new DataInputStream(new BufferedInputStream(upstream.getInputStream(), BLOCK_BYTES));
        DataOutputStream output = new DataOutputStream(new BufferedOutputStream(upstream.getOutputStream(), 4096));
        if (!accept(input, output)) {
            log(name + ": a connection from " + peer + " did not prove the placement key; closed it");
            return;
        }
        Header header = Header.read(input);
        Path target = root.resolve(header.path()).normalize();
        if (Path.of(header.path()).isAbsolute() || !target.startsWith(root) || target.equals(root)) {
            log(name + ": refused the path " + header.path() + " (not under " + root + ")");
            return;
        }
        upstream.setSoTimeout(DATA_TIMEOUT_MILLIS);
        Lines lines = new Lines(output);
        Transfer transfer = new Transfer(header, target, lines);
        try {
            transfer.run(input);
        } finally {
            transfer.close();
        }
    }

    /** One file through this Mac. */
    private final class Transfer {
        private final Header header;
        private final Path target;
        private final Path partial;
        private final Lines lines;
        private FileChannel channel;
        private MessageDigest digest;
        private long have;
        private Socket downstream;
        private DataOutputStream downstreamOutput;
        private Thread downstreamReader;
        /** This Mac still writes to the next one (false once a write failed or the chain is known to be broken). */
        private volatile boolean downstreamAlive;
        /**
         * The chain is broken below this Mac and the control host has been (or is being) told by one "lost" line: from
         * the Mac that noticed, passed up by the reader thread, or this Mac's own about its next Mac. Only the reader
         * thread says "lost" (it reads the next Mac's last lines before the connection's end), so one break is reported
         * once, by the Mac right above it.
         */
        private volatile boolean chainBroken;
        private volatile boolean received;
        private FileChannel sourceChannel;
        private volatile boolean upstreamGone;

        Transfer(Header header, Path target, Lines lines) {
            this.header = header;
            this.target = target;
            this.partial = target.resolveSibling(target.getFileName() + ".partial");
            this.lines = lines;
        }

        void run(DataInputStream input) throws Exception {
            long size = header.size();
            int chunk = header.chunkBytes();
            boolean store = header.store();
            if (header.source()) {
                // The file this Mac feeds from is checked before anything else happens, so a Mac that no longer holds
                // it says so at once (the control host then sends nothing anywhere).
                try {
                    sourceChannel = FileChannel.open(target, StandardOpenOption.READ);
                    if (sourceChannel.size() != size) {
                        throw new IOException("it is " + sourceChannel.size() + " bytes, expected " + size);
                    }
                } catch (IOException e) {
                    lines.send("fail " + name + " source " + target + ": " + e.getMessage());
                    log(name + ": cannot feed the chain from " + target + ": " + e.getMessage());
                    return;
                }
            }
            // Downstream first: the Macs further on read their partial files' prefixes meanwhile.
            if (!header.hops().isEmpty()) {
                connectDownstream();
            }
            if (store) {
                openPartial(size, chunk);
            } else {
                have = size;
            }
            lines.send("have " + name + " " + have);
            long start = input.readLong();
            if (start < 0 || start > size || store && start > have) {
                throw new IOException("start offset " + start + " does not fit (holding " + have + " of " + size + ")");
            }
            if (downstreamAlive) {
                try {
                    downstreamOutput.writeLong(start);
                    downstreamOutput.flush();
                } catch (IOException e) {
                    downstreamWriteFailed();
                }
            }
            if (sourceChannel != null) {
                watchUpstream(input);
            }
            long initial = have;
            long position = start;
            long written = 0;
            long resent = 0;
            boolean failed = false;
            long nextProgress = (position / chunk + 1) * chunk;
            byte[] buffer = new byte[BLOCK_BYTES];
            boolean hadDownstream = downstreamAlive;
            while (position < size) {
                if (hadDownstream && (!downstreamAlive || chainBroken) || upstreamGone) {
                    // The chain broke below this Mac (or the control host ended the round): this Mac stops reading at
                    // once, so it is not ahead of the others when the next round resumes, and the Macs above and the
                    // control host stop sending as soon as their socket buffers are full, not when the control host
                    // gets round to reading the "lost" line (on a loaded host that was megabytes later).
                    break;
                }
                int count;
                if (sourceChannel != null) {
                    count = sourceChannel.read(ByteBuffer.wrap(buffer, 0, (int) Math.min(buffer.length, size - position)), position);
                    if (count < 0) {
                        throw new EOFException(target + " ended at byte " + position + " of " + size + " while feeding the chain");
                    }
                } else {
                    count = input.read(buffer, 0, (int) Math.min(buffer.length, size - position));
                }
                if (count < 0) {
                    throw new EOFException("the upstream peer ended at byte " + position + " of " + size);
                }
                if (downstreamAlive) {
                    try {
                        downstreamOutput.write(buffer, 0, count);
                    } catch (IOException e) {
                        downstreamWriteFailed();
                    }
                }
                long end = position + count;
                if (store && !failed) {
                    int skip = (int) Math.max(0, Math.min(count, initial - position));
                    resent += skip;
                    long at = position + skip;
                    ByteBuffer slice = ByteBuffer.wrap(buffer, skip, count - skip);
                    try {
                        while (slice.hasRemaining()) {
                            at += channel.write(slice, at);
                        }
                        digest.update(buffer, skip, count - skip);
                        written += count - skip;
                        have = Math.max(have, end);
                    } catch (IOException e) {
                        failed = true;
                        closeQuietly(channel);
                        Files.deleteIfExists(partial);
                        lines.send("fail " + name + " disk " + at + " " + size + " " + e.getMessage());
                        log(name + ": writing " + partial + " failed at byte " + at + " of " + size + ": " + e.getMessage()
                                + "; removed it, still forwarding");
                    }
                }
                position = end;
                if (position >= nextProgress || position == size) {
                    lines.send("progress " + name + " " + position);
                    nextProgress = (position / chunk + 1) * chunk;
                }
            }
            if (position < size) {
                // Returning closes the upstream connection: the Mac above (or the control host) stops sending.
                if (!upstreamGone) {
                    awaitDownstreamReport();
                }
                return;
            }
            received = true;
            if (downstreamAlive) {
                try {
                    downstreamOutput.flush();
                    downstream.shutdownOutput();
                } catch (IOException e) {
                    downstreamWriteFailed();
                }
            }
            if (hadDownstream && !downstreamAlive) {
                awaitDownstreamReport();
                return;
            }
            if (store && !failed) {
                channel.force(false);
                channel.close();
                String actual = HexFormat.of().formatHex(digest.digest());
                if (actual.equals(header.sha256())) {
                    Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                    lines.send("done " + name + " " + written + " " + resent);
                } else {
                    Files.deleteIfExists(partial);
                    lines.send("fail " + name + " hash " + actual + " " + header.path());
                }
            } else if (!store) {
                lines.send("forwarded " + name);
            }
            if (downstreamReader != null) {
                downstreamReader.join();
            }
        }

        /**
         * A source reads nothing more from the control host after the start offset: this thread only notices when the
         * control host closes the connection (it ends the round), so the source stops reading its disk.
         */
        private void watchUpstream(InputStream input) {
            Thread.ofPlatform().daemon().name("upstream-" + name).start(() -> {
                try {
                    while (true) {
                        try {
                            if (input.read() < 0) {
                                break;
                            }
                        } catch (java.net.SocketTimeoutException quiet) {
                            // The control host only listens while the chain works: silence is expected.
                        }
                    }
                } catch (IOException e) {
                    // Gone all the same.
                }
                upstreamGone = true;
            });
        }

        /** The whole chunks of an earlier {@code .partial} are kept; the digest is brought up to them by reading them. */
        private void openPartial(long size, int chunk) throws Exception {
            Files.createDirectories(partial.getParent());
            channel = FileChannel.open(partial, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            long length = channel.size();
            have = length > size ? 0 : length == size ? size : length / chunk * chunk;
            channel.truncate(have);
            digest = MessageDigest.getInstance("SHA-256");
            ByteBuffer buffer = ByteBuffer.allocate(1 << 20);
            long at = 0;
            while (at < have) {
                buffer.clear();
                buffer.limit((int) Math.min(buffer.capacity(), have - at));
                int count = channel.read(buffer, at);
                if (count < 0) {
                    break;
                }
                buffer.flip();
                digest.update(buffer);
                at += count;
            }
        }

        private void connectDownstream() {
            Hop next = header.hops().getFirst();
            Socket socket = null;
            try {
                socket = connectWithin(next, CONNECT_WINDOW_MILLIS);
                socket.setSoTimeout(HANDSHAKE_TIMEOUT_MILLIS);
                DataInputStream input = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 4096));
                DataOutputStream output = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), BLOCK_BYTES));
                connect(key, input, output);
                header.write(output, next.store(), header.hops().subList(1, header.hops().size()));
                output.flush();
                socket.setSoTimeout(DATA_TIMEOUT_MILLIS);
                downstream = socket;
                downstreamOutput = output;
                downstreamAlive = true;
                downstreamReader = new Thread(() -> readDownstream(input, next), "downstream-" + next.name());
                downstreamReader.start();
            } catch (IOException e) {
                if (socket != null) {
                    closeQuietly(socket);
                }
                lines.send("lost " + next.name() + " cannot reach " + next.address() + ":" + next.port() + " from " + name + ": " + e.getMessage());
            }
        }

        /** The next Mac's relay may be starting (or restarting after a crash): connection refused is tried again for a while. */
        private Socket connectWithin(Hop next, long windowMillis) throws IOException {
            long deadline = System.currentTimeMillis() + windowMillis;
            while (true) {
                Socket socket = new Socket();
                try {
                    configure(socket);
                    socket.bind(new InetSocketAddress(InetAddress.getByName(next.bindAddress()), 0));
                    socket.connect(new InetSocketAddress(InetAddress.getByName(next.address()), next.port()), HANDSHAKE_TIMEOUT_MILLIS);
                    return socket;
                } catch (java.net.ConnectException refused) {
                    closeQuietly(socket);
                    if (System.currentTimeMillis() > deadline) {
                        throw refused;
                    }
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw refused;
                    }
                }
            }
        }

        private void readDownstream(InputStream input, Hop next) {
            try {
                byte[] line = new byte[8192];
                int length = 0;
                int value;
                while ((value = input.read()) >= 0) {
                    if (value == '\n') {
                        String text = new String(line, 0, length, StandardCharsets.UTF_8);
                        if (text.startsWith("lost ")) {
                            // A Mac further down reported the break: this Mac stops too, and says nothing more about it.
                            chainBroken = true;
                            downstreamAlive = false;
                        }
                        lines.send(text);
                        length = 0;
                    } else if (length < line.length) {
                        line[length++] = (byte) value;
                    }
                }
                if (!received) {
                    downstreamLost(new EOFException("closed the connection"));
                }
            } catch (IOException e) {
                downstreamLost(e);
            }
        }

        /** Reported by the reader thread (or after it stopped answering): the next Mac went away. Once per break. */
        private synchronized void downstreamLost(Exception cause) {
            downstreamAlive = false;
            if (chainBroken) {
                return;
            }
            chainBroken = true;
            closeQuietly(downstream);
            lines.send("lost " + header.hops().getFirst().name() + " " + cause.getMessage());
        }

        /**
         * A write to the next Mac failed: stop forwarding, but leave the report to the reader thread, which first reads
         * the next Mac's last lines (a "lost" further down, sent just before it closed) and then sees the end.
         */
        private void downstreamWriteFailed() {
            downstreamAlive = false;
        }

        /** Before this Mac closes its upstream connection, the reader thread passes the break up (bounded wait). */
        private void awaitDownstreamReport() throws InterruptedException {
            if (downstreamReader == null) {
                return;
            }
            downstreamReader.join(HANDSHAKE_TIMEOUT_MILLIS);
            if (downstreamReader.isAlive()) {
                downstreamLost(new IOException("stopped answering"));
            }
        }

        void close() {
            if (channel != null) {
                PlacementRelay.closeQuietly(channel);
            }
            if (sourceChannel != null) {
                PlacementRelay.closeQuietly(sourceChannel);
            }
            if (downstream != null) {
                PlacementRelay.closeQuietly(downstream);
            }
        }
    }

    private boolean accept(DataInputStream input, DataOutputStream output) throws IOException {
        if (input.readInt() != MAGIC) {
            return false;
        }
        byte[] theirs = input.readNBytes(NONCE_BYTES);
        if (theirs.length != NONCE_BYTES) {
            return false;
        }
        byte[] mine = nonce();
        output.writeInt(MAGIC);
        output.write(mine);
        output.write(mac(key, "accept", theirs, mine));
        output.flush();
        byte[] proof = input.readNBytes(MAC_BYTES);
        return MessageDigest.isEqual(proof, mac(key, "connect", mine, theirs));
    }

    /** The connecting side of the handshake (a relay toward the next Mac, the control host toward the first). */
    static void connect(byte[] key, DataInputStream input, DataOutputStream output) throws IOException {
        byte[] mine = nonce();
        output.writeInt(MAGIC);
        output.write(mine);
        output.flush();
        if (input.readInt() != MAGIC) {
            throw new IOException("the peer does not speak the placement protocol");
        }
        byte[] theirs = input.readNBytes(NONCE_BYTES);
        byte[] proof = input.readNBytes(MAC_BYTES);
        if (!MessageDigest.isEqual(proof, mac(key, "accept", mine, theirs))) {
            throw new IOException("the peer did not prove the placement key");
        }
        output.write(mac(key, "connect", theirs, mine));
        output.flush();
    }

    static byte[] mac(byte[] key, String label, byte[] first, byte[] second) {
        try {
            Mac hmac = Mac.getInstance("HmacSHA256");
            hmac.init(new SecretKeySpec(key, "HmacSHA256"));
            hmac.update(label.getBytes(StandardCharsets.US_ASCII));
            hmac.update((byte) 0);
            hmac.update(first);
            hmac.update(second);
            return hmac.doFinal();
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] nonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        new SecureRandom().nextBytes(nonce);
        return nonce;
    }

    private static void configure(Socket socket) throws IOException {
        socket.setTcpNoDelay(true);
        socket.setSendBufferSize(SOCKET_BUFFER_BYTES);
        socket.setReceiveBufferSize(SOCKET_BUFFER_BYTES);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // Closing after a failure: nothing more to say.
        }
    }
}
