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
import java.util.EnumSet;
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

    private final String machine;
    private final SFTPClient sftp;
    private final RemoteShell shell;
    private final int writeSize;
    private final int writesInFlight;

    /**
     * @param machine named in messages
     * @param sftp an open SFTP client to the Mac (not closed here)
     * @param shell runs {@code shasum} on the same Mac
     */
    public FileCopy(String machine, SFTPClient sftp, RemoteShell shell) {
        this(machine, sftp, shell, WRITE_SIZE, WRITES_IN_FLIGHT);
    }

    /** With other write sizes and pipeline depths, for measuring them. */
    FileCopy(String machine, SFTPClient sftp, RemoteShell shell, int writeSize, int writesInFlight) {
        this.machine = machine;
        this.sftp = sftp;
        this.shell = shell;
        this.writeSize = writeSize;
        this.writesInFlight = writesInFlight;
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
        RemoteFile file;
        try {
            file = sftp.open(partial, modes);
        } catch (SFTPException e) {
            throw new IOException("cannot write " + machine + ":" + partial + " to copy " + local + " there: "
                    + e.getStatusCode() + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
        }
        boolean written = false;
        try (FileChannel channel = FileChannel.open(local, StandardOpenOption.READ)) {
            if (resumeFrom > 0 && file.length() != resumeFrom) {
                // Grown since it was hashed (another copier?): cut back to the verified prefix.
                file.setLength(resumeFrom);
            }
            channel.position(resumeFrom);
            InputStream in = Channels.newInputStream(channel);
            byte[] buffer = new byte[writeSize];
            long done = resumeFrom;
            // flush() waits for every acknowledgement; the handle is closed with the file.
            OutputStream out = file.new RemoteFileOutputStream(resumeFrom, writesInFlight);
            int count;
            while ((count = in.readNBytes(buffer, 0, buffer.length)) > 0) {
                out.write(buffer, 0, count);
                sent.update(buffer, 0, count);
                done += count;
                progress.transferred(done, size);
            }
            out.flush();
            written = true;
        } catch (SFTPException e) {
            throw new IOException("copy of " + local + " to " + machine + ":" + partial + " failed: "
                    + e.getStatusCode() + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
        } finally {
            if (written) {
                file.close();
            } else {
                closeAfterFailure(file);
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
        MessageDigest digest = digest(local, length);
        String prefixHash;
        try {
            prefixHash = hex(((MessageDigest) digest.clone()).digest());
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("the JDK's SHA-256 can be cloned", e);
        }
        return prefixHash.equals(remoteSha256(partial)) ? new Prefix(length, digest) : new Prefix(0, newDigest());
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
        byte[] buffer = new byte[1 << 20];
        long remaining = length;
        try (InputStream in = Files.newInputStream(file)) {
            while (remaining > 0) {
                int count = in.read(buffer, 0, (int) Math.min(buffer.length, remaining));
                if (count < 0) {
                    throw new IOException(file + " is shorter than " + length + " bytes");
                }
                digest.update(buffer, 0, count);
                remaining -= count;
            }
        }
        return digest;
    }
}
