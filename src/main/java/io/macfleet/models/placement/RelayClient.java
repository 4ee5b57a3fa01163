package io.macfleet.models.placement;

import io.macfleet.deployment.NodeDeployer;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The control host's side of the relay protocol ({@link PlacementRelay} is the Macs' side, whose handshake it uses): it
 * feeds the first Mac of a chain one file and reads back what every Mac of the chain says.
 */
final class RelayClient {
    static final int BLOCK_BYTES = PlacementRelay.BLOCK_BYTES;
    static final int SOCKET_BUFFER_BYTES = PlacementRelay.SOCKET_BUFFER_BYTES;
    private static final int READ_TIMEOUT_MILLIS = 120_000;

    /** SOURCE: the chain's first Mac was to feed it from its own copy and could not read it. */
    enum Kind { DONE, DISK, HASH, SOURCE }

    /** What one Mac said at the end: placed (bytes written, bytes it received again), or failed (disk, hash). */
    record Report(Kind kind, long written, long resent, String detail) {
    }

    /** @param lost Macs that went away during the round, with why (the round ended for the whole chain) */
    record Outcome(long bytesSent, Map<String, Report> reports, Map<String, String> lost) {
    }

    private final PlacementEngine.Settings settings;
    private final byte[] key;
    private final NodeDeployer.Listener listener;

    RelayClient(PlacementEngine.Settings settings, byte[] key, NodeDeployer.Listener listener) {
        this.settings = settings;
        this.key = key;
        this.listener = listener;
    }

    /** What the reader thread collects from the relays' lines. */
    private static final class Heard {
        final Map<String, Long> have = new ConcurrentHashMap<>();
        final Map<String, Report> reports = new ConcurrentHashMap<>();
        final Map<String, String> lost = new ConcurrentHashMap<>();
        volatile boolean ended;
    }

    /** Feeds the chain's first Mac the file from this host. */
    Outcome send(List<PlacementChain.Link> chain, PlacedFile file) {
        return send(chain, file, false);
    }

    /**
     * With {@code fromHead}, the chain's first Mac holds the file verified and reads it from its own disk: this host
     * sends the header and the start offset only (no byte of the file) and watches the chain as it works.
     */
    Outcome send(List<PlacementChain.Link> chain, PlacedFile file, boolean fromHead) {
        PlacementChain.Link head = chain.getFirst();
        Heard heard = new Heard();
        Socket socket;
        try {
            socket = connect(head.listenAddress());
        } catch (IOException e) {
            return new Outcome(0, Map.of(), Map.of(head.name(), "cannot reach its relay at " + head.listenAddress() + ":" + settings.port()
                    + ": " + e.getMessage()));
        }
        long sent = 0;
        Thread reader = null;
        try (socket) {
            DataInputStream input = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 8192));
            DataOutputStream output = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), BLOCK_BYTES));
            socket.setSoTimeout(10_000);
            PlacementRelay.connect(key, input, output);
            writeHeader(output, chain, file, fromHead);
            output.flush();
            socket.setSoTimeout(READ_TIMEOUT_MILLIS);
            reader = Thread.ofPlatform().daemon().name("placement-lines-" + head.name()).start(() -> read(input, heard, file));
            synchronized (heard) {
                while (heard.have.size() < chain.size() && heard.lost.isEmpty() && !heard.ended) {
                    heard.wait(1000);
                }
            }
            if (!heard.lost.isEmpty() || heard.ended && heard.have.size() < chain.size()) {
                if (heard.lost.isEmpty()) {
                    heard.lost.put(head.name(), "its relay closed the connection before the chain reported");
                }
                return new Outcome(0, Map.copyOf(heard.reports), Map.copyOf(heard.lost));
            }
            long start = chain.stream().filter(PlacementChain.Link::store).mapToLong(link -> heard.have.get(link.name())).min().orElse(file.size());
            output.writeLong(start);
            if (fromHead) {
                output.flush();
                // The head ends the session when the chain is through; a Mac lost ends the round, and closing the
                // connection (below) tells the head to stop reading its disk.
                synchronized (heard) {
                    while (!heard.ended && heard.lost.isEmpty()) {
                        heard.wait(1000);
                    }
                }
                if (heard.lost.isEmpty()) {
                    reader.join();
                }
                return new Outcome(0, new LinkedHashMap<>(heard.reports), new LinkedHashMap<>(heard.lost));
            }
            try (FileChannel channel = FileChannel.open(file.localFile(), StandardOpenOption.READ)) {
                ByteBuffer buffer = ByteBuffer.allocate(BLOCK_BYTES);
                long position = start;
                long feedStarted = System.nanoTime();
                while (position < file.size() && heard.lost.isEmpty()) {
                    buffer.clear();
                    buffer.limit((int) Math.min(BLOCK_BYTES, file.size() - position));
                    int count = channel.read(buffer, position);
                    if (count < 0) {
                        throw new IOException(file.localFile() + " ended at byte " + position + " of " + file.size());
                    }
                    output.write(buffer.array(), 0, count);
                    position += count;
                    sent += count;
                    if (settings.feedBytesPerSecond() > 0) {
                        long due = feedStarted + sent * 1_000_000_000L / settings.feedBytesPerSecond();
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                        }
                    }
                }
            }
            output.flush();
            if (heard.lost.isEmpty()) {
                socket.shutdownOutput();
                reader.join();
            }
        } catch (IOException e) {
            // A relay that stops because the chain broke below it closes this connection right after its "lost" line:
            // the reader reads that line before the end, so it names the Mac that went away, not the first one.
            if (reader != null) {
                try {
                    reader.join(5000);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            if (heard.lost.isEmpty()) {
                heard.lost.put(head.name(), "the connection to its relay broke: " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            heard.lost.put(head.name(), "interrupted");
        }
        if (reader != null) {
            try {
                reader.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return new Outcome(sent, new LinkedHashMap<>(heard.reports), new LinkedHashMap<>(heard.lost));
    }

    /** The first Mac's relay may still be starting (its JVM compiles the relay's source): refused connections are tried again. */
    private Socket connect(String address) throws IOException {
        long deadline = System.nanoTime() + settings.relayStartTimeout().toNanos();
        while (true) {
            Socket socket = new Socket();
            try {
                socket.setTcpNoDelay(true);
                socket.setSendBufferSize(SOCKET_BUFFER_BYTES);
                socket.connect(new InetSocketAddress(InetAddress.getByName(address), settings.port()), 5000);
                return socket;
            } catch (ConnectException refused) {
                socket.close();
                if (System.nanoTime() > deadline) {
                    throw refused;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw refused;
                }
            } catch (IOException e) {
                socket.close();
                throw e;
            }
        }
    }

    private void writeHeader(DataOutputStream output, List<PlacementChain.Link> chain, PlacedFile file, boolean fromHead) throws IOException {
        output.writeUTF(file.path());
        output.writeLong(file.size());
        output.writeUTF(file.sha256());
        output.writeInt(settings.chunkBytes());
        output.writeBoolean(!fromHead && chain.getFirst().store());
        output.writeBoolean(fromHead);
        output.writeInt(chain.size() - 1);
        for (PlacementChain.Link link : chain.subList(1, chain.size())) {
            output.writeUTF(link.name());
            output.writeUTF(link.listenAddress());
            output.writeInt(settings.port());
            output.writeUTF(link.upstreamAddress().orElseThrow());
            output.writeBoolean(link.store());
        }
    }

    private void read(InputStream input, Heard heard, PlacedFile file) {
        try {
            StringBuilder line = new StringBuilder();
            int value;
            byte[] bytes = new byte[8192];
            int length = 0;
            while ((value = input.read()) >= 0) {
                if (value != '\n') {
                    if (length < bytes.length) {
                        bytes[length++] = (byte) value;
                    }
                    continue;
                }
                line.setLength(0);
                line.append(new String(bytes, 0, length, StandardCharsets.UTF_8));
                length = 0;
                heardLine(line.toString(), heard, file);
            }
        } catch (IOException e) {
            // The connection ended; the sender sees it too.
        } finally {
            synchronized (heard) {
                heard.ended = true;
                heard.notifyAll();
            }
        }
    }

    private void heardLine(String line, Heard heard, PlacedFile file) {
        String[] words = line.split(" ", 3);
        if (words.length < 2) {
            return;
        }
        String machine = words[1];
        String rest = words.length > 2 ? words[2] : "";
        try {
            switch (words[0]) {
                case "have" -> {
                    long have = Long.parseLong(rest.trim());
                    listener.copying(machine, file.path(), have, file.size());
                    synchronized (heard) {
                        heard.have.put(machine, have);
                        heard.notifyAll();
                    }
                }
                case "progress" -> listener.copying(machine, file.path(), Long.parseLong(rest.trim()), file.size());
                case "done" -> {
                    String[] numbers = rest.split(" ");
                    heard.reports.put(machine, new Report(Kind.DONE, Long.parseLong(numbers[0]), Long.parseLong(numbers[1]), ""));
                    listener.step(machine, "verified " + file.path() + " (SHA-256) and moved it into place");
                }
                case "fail" -> {
                    String[] parts = rest.split(" ", 4);
                    if (parts[0].equals("disk")) {
                        heard.reports.put(machine, new Report(Kind.DISK, Long.parseLong(parts[1]), 0, parts.length > 3 ? parts[3] : ""));
                    } else if (parts[0].equals("hash")) {
                        heard.reports.put(machine, new Report(Kind.HASH, 0, 0, parts[1]));
                    } else if (parts[0].equals("source")) {
                        heard.reports.put(machine, new Report(Kind.SOURCE, 0, 0, rest.substring("source ".length())));
                        synchronized (heard) {
                            heard.notifyAll();
                        }
                    }
                    listener.step(machine, "failed: " + rest);
                }
                case "lost" -> {
                    synchronized (heard) {
                        heard.lost.putIfAbsent(machine, rest);
                        heard.notifyAll();
                    }
                    listener.step(machine, "lost: " + rest);
                }
                default -> {
                    // "forwarded" and anything newer: nothing to record.
                }
            }
        } catch (RuntimeException malformed) {
            listener.step(machine, "unreadable relay line: " + line);
        }
    }
}
