package io.macfleet.deployment;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import net.schmizz.concurrent.Promise;
import net.schmizz.sshj.sftp.PacketType;
import net.schmizz.sshj.sftp.Request;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Set;
import net.schmizz.sshj.sftp.FileAttributes;
import net.schmizz.sshj.sftp.OpenMode;
import net.schmizz.sshj.sftp.RemoteFile;
import net.schmizz.sshj.sftp.Response;
import net.schmizz.sshj.sftp.SFTPClient;
import net.schmizz.sshj.sftp.SFTPEngine;
import net.schmizz.sshj.sftp.SFTPException;

/**
 * Copies one local file to a Mac over SFTP so that it can be interrupted at any point and started again:
 * the bytes go to {@code PATH.partial}; a later copy keeps a partial file whose content the Mac hashes to the
 * same SHA-256 as the local file's prefix of that length and sends only the rest; the whole file is checked by
 * the Mac's own {@code shasum -a 256} before it is renamed into place (atomically where the server offers
 * OpenSSH's posix-rename, as macOS's sftp-server does). A file already in place with the same hash is left alone.
 * Writes are large and several are in flight at once, so a copy is not bound by the round trip per write.
 */
public final class FileCopy {

    /** Bytes per SFTP write: OpenSSH's sftp-server takes messages up to 256 KiB, so 128 KiB of data fits anywhere. */
    static final int WRITE_SIZE = 128 * 1024;
    /** Writes sent before the first is acknowledged: 16 x 128 KiB = 2 MiB in flight, a loopback or LAN's worth. */
    static final int WRITES_IN_FLIGHT = 16;
    static final String PARTIAL_SUFFIX = ".partial";
    private static final String POSIX_RENAME = "posix-rename@openssh.com";

    /** Files from this size on are sent over {@link #STRIPES} connections. */
    public static final long STRIPED_FROM = 64L << 20;
    /** Connections for a large file: each encrypts on a thread of its own at both ends. */
    public static final int STRIPES = 3;

    private final String machine;
    private final List<SFTPClient> channels;
    private final SFTPClient sftp;
    private final RemoteShell shell;
    private final int writeSize;
    private final int writesInFlight;
    private final int segmentSize;

    /**
     * @param machine named in messages
     * @param sftp an open SFTP client to the Mac (not closed here)
     * @param shell runs {@code shasum} on the same Mac
     */
    public FileCopy(String machine, SFTPClient sftp, RemoteShell shell) {
        this(machine, List.of(sftp), shell);
    }

    /**
     * @param channels open SFTP clients to the same Mac, each on its own connection (not closed here); a file is
     *                 striped over all of them, the first also does the rest (stat, rename)
     */
    public FileCopy(String machine, List<SFTPClient> channels, RemoteShell shell) {
        this(machine, channels, shell, WRITE_SIZE, WRITES_IN_FLIGHT);
    }

    /** With other write sizes and pipeline depths, for measuring them. */
    FileCopy(String machine, List<SFTPClient> channels, RemoteShell shell, int writeSize, int writesInFlight) {
        if (channels.isEmpty()) {
            throw new IllegalArgumentException("no SFTP channel to " + machine);
        }
        this.machine = machine;
        this.channels = List.copyOf(channels);
        this.sftp = channels.getFirst();
        this.shell = shell;
        this.writeSize = writeSize;
        this.writesInFlight = writesInFlight;
        // Read ahead in 8 writes' worth: few enough reads, small enough buffers (2 per channel, plus 2).
        this.segmentSize = 8 * writeSize;
    }

    /** How many connections {@link #FileCopy(String, List, RemoteShell)} should get for a file of this size. */
    public static int connectionsFor(long size) {
        return size >= STRIPED_FROM ? STRIPES : 1;
    }

    /**
     * Copies {@code local} to {@code remotePath} (whose directory must exist), resuming and verifying as the class
     * says. Throws {@link IOException} when the connection breaks (the partial file stays for the next attempt)
     * or the copied file does not hash as the local one (the partial file is removed).
     */
    public CopyOutcome copy(Path local, String remotePath, CopyProgress progress) throws IOException {
        if (!Files.isRegularFile(local)) {
            throw new IOException("cannot copy " + local + " to " + machine + ": not a readable file");
        }
        long size = Files.size(local);
        // The local file is hashed ahead only when a file of its size is in place (to skip it); otherwise it is
        // hashed as it is sent, the bytes actually sent, in one read of the file.
        String whole = null;
        FileAttributes existing = sftp.statExistence(remotePath);
        if (existing != null && existing.getSize() == size) {
            whole = hex(digest(local, size));
            if (whole.equals(remoteSha256(remotePath))) {
                progress.transferred(size, size);
                return new CopyOutcome(CopyOutcome.Kind.ALREADY_PRESENT, size, size, 0, whole);
            }
        }
        String partial = remotePath + PARTIAL_SUFFIX;
        Prefix prefix = verifiedPrefix(local, size, partial);
        long resumeFrom = prefix.length();
        MessageDigest sent = prefix.digest();
        Set<OpenMode> modes = resumeFrom > 0 ? EnumSet.of(OpenMode.WRITE, OpenMode.CREAT)
                : EnumSet.of(OpenMode.WRITE, OpenMode.CREAT, OpenMode.TRUNC);
        progress.transferred(resumeFrom, size);
        // Closed by hand: after a broken connection SSHJ's close rethrows the very exception of the failed write,
        // which try-with-resources cannot add to itself.
        StripeFile file;
        try {
            file = StripeFile.open(sftp, partial, modes);
        } catch (SFTPException e) {
            throw new IOException("cannot write " + machine + ":" + partial + " to copy " + local + " there: "
                    + e.getStatusCode() + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
        }
        List<StripeFile> files = new ArrayList<>(List.of(file));
        boolean written = false;
        try {
            if (resumeFrom > 0 && file.length() != resumeFrom) {
                // Grown since it was hashed (another copier?): cut back to the verified prefix.
                file.setLength(resumeFrom);
            }
            for (SFTPClient stripe : channels.subList(1, channels.size())) {
                // The file exists now: the other channels must not truncate what the first one may already write.
                files.add(StripeFile.open(stripe, partial, EnumSet.of(OpenMode.WRITE)));
            }
            send(local, resumeFrom, size, files, sent, progress);
            written = true;
        } catch (SFTPException e) {
            throw new IOException("copy of " + local + " to " + machine + ":" + partial + " failed: "
                    + e.getStatusCode() + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
        } finally {
            for (StripeFile open : files) {
                if (written) {
                    open.close();
                } else {
                    closeAfterFailure(open);
                }
            }
        }
        String sha256 = hex(sent);
        if (whole != null && !whole.equals(sha256)) {
            sftp.rm(partial);
            throw new IOException("copy of " + local + " to " + machine + ":" + remotePath + " abandoned: the local file"
                    + " changed while it was copied (SHA-256 " + whole + " before, " + sha256 + " as sent)");
        }
        String copied = remoteSha256(partial);
        if (!sha256.equals(copied)) {
            sftp.rm(partial);
            throw new IOException("copy of " + local + " to " + machine + ":" + remotePath + " does not verify: the Mac"
                    + " hashes it to SHA-256 " + copied + ", the local file is " + sha256 + "; the partial file was removed");
        }
        renameIntoPlace(partial, remotePath);
        return new CopyOutcome(resumeFrom > 0 ? CopyOutcome.Kind.RESUMED : CopyOutcome.Kind.COPIED, size, resumeFrom,
                size - resumeFrom, sha256);
    }

    /** A run of the file's bytes read ahead, written by one channel as consecutive writes. */
    private record Segment(long offset, byte[] bytes, int length) {
        static final Segment END = new Segment(-1, new byte[0], 0);
    }

    /** One write sent and not yet acknowledged. */
    private record Pending(long offset, Promise<Response, SFTPException> answer) {
    }

    /** A handle on which writes can be sent without waiting for their answers (SSHJ keeps that protected). */
    private static final class StripeFile extends RemoteFile {

        StripeFile(SFTPEngine engine, String path, byte[] handle) {
            super(engine, path, handle);
        }

        static StripeFile open(SFTPClient sftp, String path, Set<OpenMode> modes) throws IOException {
            SFTPEngine engine = sftp.getSFTPEngine();
            Request open = engine.newRequest(PacketType.OPEN);
            open.putString(path, engine.getSubsystem().getRemoteCharset());
            open.putUInt32(OpenMode.toMask(modes));
            open.putFileAttributes(FileAttributes.EMPTY);
            byte[] handle = engine.request(open).retrieve(engine.getTimeoutMs(), TimeUnit.MILLISECONDS)
                    .ensurePacketTypeIs(PacketType.HANDLE).readBytes();
            return new StripeFile(engine, path, handle);
        }

        Promise<Response, SFTPException> send(long offset, byte[] data, int from, int length) throws IOException {
            return asyncWrite(offset, data, from, length);
        }

        void acknowledged(Promise<Response, SFTPException> answer) throws IOException {
            answer.retrieve(requester.getTimeoutMs(), TimeUnit.MILLISECONDS).ensureStatusPacketIsOK();
        }
    }

    /**
     * Sends the file from {@code from} on every open handle at once: this thread reads the file in order, hashes it
     * and hands out segments; each channel's sender writes them with {@link #writesInFlight} writes in flight. No
     * write is sent more than {@link #stripeWindow} bytes past the lowest one not yet acknowledged, so whatever
     * happens to the connections, a partial file left behind holds every byte below its length minus
     * {@link #resumeMargin()} (see verifiedPrefix). Progress is the length of the prefix sent (as SSHJ's stream
     * reported it before striping): a listener that throws stops the copy there, the writes in flight still land.
     */
    private void send(Path local, long from, long size, List<StripeFile> files, MessageDigest sent, CopyProgress progress)
            throws IOException {
        int stripes = files.size();
        long window = stripeWindow(stripes);
        int buffers = 2 * stripes + 2;
        BlockingQueue<byte[]> free = new ArrayBlockingQueue<>(buffers);
        for (int index = 0; index < buffers; index++) {
            free.add(new byte[segmentSize]);
        }
        BlockingQueue<Segment> segments = new LinkedBlockingQueue<>();
        ConcurrentSkipListSet<Long> unacknowledged = new ConcurrentSkipListSet<>();
        ConcurrentSkipListSet<Long> unsent = new ConcurrentSkipListSet<>();
        AtomicLong queuedUpTo = new AtomicLong(from);
        long[] reported = {from};
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Object acknowledgements = new Object();
        List<Thread> senders = new ArrayList<>();
        for (StripeFile file : files) {
            senders.add(Thread.ofPlatform().daemon().name("file-copy-" + machine + "-" + senders.size()).start(() -> {
                java.util.ArrayDeque<Pending> pending = new java.util.ArrayDeque<>();
                try {
                    while (failure.get() == null) {
                        Segment segment = segments.take();
                        if (segment == Segment.END) {
                            break;
                        }
                        for (int at = 0; at < segment.length() && failure.get() == null; at += writeSize) {
                            long offset = segment.offset() + at;
                            while (failure.get() == null && offset - unacknowledged.first() > window) {
                                if (pending.isEmpty()) {
                                    synchronized (acknowledgements) {
                                        if (offset - unacknowledged.first() > window) {
                                            acknowledgements.wait(100);
                                        }
                                    }
                                } else {
                                    acknowledge(file, pending.removeFirst(), unacknowledged, acknowledgements);
                                }
                            }
                            pending.addLast(new Pending(offset, file.send(offset, segment.bytes(), at, Math.min(writeSize, segment.length() - at))));
                            synchronized (acknowledgements) {
                                unsent.remove(offset);
                                // Read before the set: an offset queued after this read is at or past it.
                                long queued = queuedUpTo.get();
                                long prefix = unsent.isEmpty() ? queued : unsent.first();
                                if (prefix > reported[0]) {
                                    reported[0] = prefix;
                                    progress.transferred(prefix, size);
                                }
                            }
                            if (pending.size() >= writesInFlight) {
                                acknowledge(file, pending.removeFirst(), unacknowledged, acknowledgements);
                            }
                        }
                        // Every write of the segment is sent: its bytes were copied into the packets.
                        free.add(segment.bytes());
                    }
                    while (!pending.isEmpty() && failure.get() == null) {
                        acknowledge(file, pending.removeFirst(), unacknowledged, acknowledgements);
                    }
                } catch (InterruptedException e) {
                    failure.compareAndSet(null, new java.io.InterruptedIOException("copy interrupted"));
                } catch (IOException | RuntimeException e) {
                    failure.compareAndSet(null, e);
                } finally {
                    synchronized (acknowledgements) {
                        acknowledgements.notifyAll();
                    }
                }
            }));
        }
        try (FileChannel channel = FileChannel.open(local, StandardOpenOption.READ)) {
            channel.position(from);
            InputStream in = Channels.newInputStream(channel);
            long done = from;
            while (done < size && failure.get() == null) {
                byte[] buffer = free.poll(100, TimeUnit.MILLISECONDS);
                if (buffer == null) {
                    continue;
                }
                int count = in.readNBytes(buffer, 0, (int) Math.min(buffer.length, size - done));
                if (count <= 0) {
                    throw new IOException(local + " became shorter than " + size + " bytes while it was copied");
                }
                sent.update(buffer, 0, count);
                for (int at = 0; at < count; at += writeSize) {
                    unacknowledged.add(done + at);
                    unsent.add(done + at);
                }
                queuedUpTo.set(done + count);
                segments.add(new Segment(done, buffer, count));
                done += count;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.compareAndSet(null, new java.io.InterruptedIOException("copy interrupted"));
        } catch (IOException | RuntimeException e) {
            failure.compareAndSet(null, e);
        } finally {
            for (int index = 0; index < stripes; index++) {
                segments.add(Segment.END);
            }
            for (Thread sender : senders) {
                try {
                    sender.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    failure.compareAndSet(null, new java.io.InterruptedIOException("copy interrupted"));
                }
            }
        }
        switch (failure.get()) {
            case null -> {
            }
            case IOException e -> throw e;
            case RuntimeException e -> throw e;
            case Throwable e -> throw new IOException(e);
        }
    }

    /** Waits for one write's answer and records it. */
    private static void acknowledge(StripeFile file, Pending write, ConcurrentSkipListSet<Long> unacknowledged, Object acknowledgements)
            throws IOException {
        file.acknowledged(write.answer());
        synchronized (acknowledgements) {
            unacknowledged.remove(write.offset());
            acknowledgements.notifyAll();
        }
    }

    /** How far past the lowest unacknowledged write a write may start: each channel's writes in flight. */
    private long stripeWindow(int stripes) {
        return (long) stripes * writesInFlight * writeSize;
    }

    /** Bytes at the end of a partial file that a broken striped copy may have left with holes. */
    long resumeMargin() {
        // The copy that left the partial file may have had more connections than this one.
        return stripeWindow(Math.max(STRIPES, channels.size())) + writeSize;
    }

    private static void closeAfterFailure(RemoteFile file) {
        try {
            file.close();
        } catch (IOException | RuntimeException alreadyReported) {
            // The copy failed already; the partial file stays for the next attempt whatever this says.
        }
    }

    /** The partial file's content and its SHA-256 state when it is the local file's prefix; nothing otherwise. */
    private record Prefix(long length, MessageDigest digest) {
    }

    /** The partial file's length and the local prefix's digest when the Mac's hash of it matches, else length 0. */
    private Prefix verifiedPrefix(Path local, long size, String partial) throws IOException {
        FileAttributes attributes = sftp.statExistence(partial);
        if (attributes == null || attributes.getSize() <= 0 || attributes.getSize() > size) {
            return new Prefix(0, newDigest());
        }
        long length = attributes.getSize();
        // A striped copy that broke may have left holes in its last resumeMargin() bytes, never below.
        long shorter = (length - resumeMargin()) / writeSize * writeSize;
        MessageDigest digest = digest(local, Math.max(shorter, 0));
        MessageDigest whole = clone(digest);
        update(whole, local, Math.max(shorter, 0), length);
        if (hex(clone(whole)).equals(remoteSha256(partial))) {
            return new Prefix(length, whole);
        }
        if (shorter <= 0) {
            return new Prefix(0, newDigest());
        }
        sftp.truncate(partial, shorter);
        return hex(clone(digest)).equals(remoteSha256(partial)) ? new Prefix(shorter, digest) : new Prefix(0, newDigest());
    }

    private static MessageDigest clone(MessageDigest digest) {
        try {
            return (MessageDigest) digest.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("the JDK's SHA-256 can be cloned", e);
        }
    }

    private void renameIntoPlace(String from, String to) throws IOException {
        SFTPEngine engine = sftp.getSFTPEngine();
        if (engine.supportsServerExtension(POSIX_RENAME, "1")) {
            // rename(2) semantics: replaces an existing file atomically; plain SFTPv3 RENAME refuses to.
            Response response = engine.request(engine.newExtendedRequest(POSIX_RENAME).putString(from).putString(to))
                    .retrieve(engine.getTimeoutMs(), java.util.concurrent.TimeUnit.MILLISECONDS);
            response.ensureStatusPacketIsOK();
            return;
        }
        if (sftp.statExistence(to) != null) {
            // Without posix-rename there is no atomic replace over SFTPv3: the old file goes first.
            sftp.rm(to);
        }
        sftp.rename(from, to);
    }

    /** The Mac's SHA-256 of a file, by its own shasum, so what is checked is what is on its disk. */
    String remoteSha256(String remotePath) throws IOException {
        RemoteShell.Answer answer = shell.run("shasum", java.util.List.of("-a", "256", remotePath));
        String line = answer.stdout().strip();
        int space = line.indexOf(' ');
        if (answer.exitStatus() != 0 || space != 64 || !line.substring(0, 64).matches("[0-9a-f]{64}")) {
            throw new IOException("cannot hash " + machine + ":" + remotePath + " with `shasum -a 256` (exit "
                    + answer.exitStatus() + "): " + (answer.stderr().isBlank() ? line : answer.stderr().strip()));
        }
        return line.substring(0, 64).toLowerCase(Locale.ROOT);
    }

    /** SHA-256 of the first {@code length} bytes of a local file, in hex. */
    static String sha256(Path file, long length) throws IOException {
        return hex(digest(file, length));
    }

    private static String hex(byte[] digest) {
        return HexFormat.of().formatHex(digest);
    }

    private static String hex(MessageDigest digest) {
        return hex(digest.digest());
    }

    private static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** The SHA-256 state after the first {@code length} bytes of a local file. */
    private static MessageDigest digest(Path file, long length) throws IOException {
        MessageDigest digest = newDigest();
        update(digest, file, 0, length);
        return digest;
    }

    /** Adds bytes {@code from} (inclusive) to {@code to} (exclusive) of a local file to the digest. */
    private static void update(MessageDigest digest, Path file, long from, long to) throws IOException {
        byte[] buffer = new byte[1 << 20];
        long remaining = to - from;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            channel.position(from);
            InputStream in = Channels.newInputStream(channel);
            while (remaining > 0) {
                int count = in.read(buffer, 0, (int) Math.min(buffer.length, remaining));
                if (count < 0) {
                    throw new IOException(file + " is shorter than " + to + " bytes");
                }
                digest.update(buffer, 0, count);
                remaining -= count;
            }
        }
    }
}
