package io.macfleet.simulator;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who owns each file of a simulated Mac and its permission bits, as {@code stat -f '%Su:%Sg %Lp'} shows them. The
 * simulated file system is a directory of the host, written by one host user, so ownership is kept here: a file
 * root made ({@code sudo install -o root -g wheel -m 644 ...}, {@code sudo chown}) is recorded; anything else belongs
 * to the SSH user (group staff), with the mode the host file has. The SSH user (every command without sudo, and
 * SFTP) may change a file only as Unix allows it: write a file it owns (owner write bit) or one whose other-write
 * bit is set, and create, rename or remove names only in a directory it may write. Group permissions are not
 * modelled beyond that (the SSH user is in no group but staff).
 */
final class FileOwners {

    /** One file's owner, group and permission bits. */
    record Owner(String user, String group, int mode) {
        String modeOctal() {
            return Integer.toOctalString(mode & 07777);
        }
    }

    private final Map<Path, Owner> recorded = new ConcurrentHashMap<>();
    private final String sshUser;

    FileOwners(String sshUser) {
        this.sshUser = sshUser;
    }

    /** The owner of a host path of this Mac's file system. */
    Owner of(Path file) {
        Owner owner = recorded.get(file.toAbsolutePath().normalize());
        if (owner != null) {
            return owner;
        }
        int mode = Files.isDirectory(file) ? 0755 : Files.isExecutable(file) ? 0755 : 0644;
        return new Owner(sshUser, "staff", mode);
    }

    /** Records what root set (a null part keeps the current one). */
    void set(Path file, String user, String group, Integer mode) {
        Owner current = of(file);
        recorded.put(file.toAbsolutePath().normalize(), new Owner(user == null ? current.user() : user, group == null ? current.group() : group,
                mode == null ? current.mode() : mode));
    }

    /** A file that is gone (or replaced by a new one of the SSH user) forgets its owner. */
    void forget(Path file) {
        recorded.remove(file.toAbsolutePath().normalize());
    }

    void clear() {
        recorded.clear();
    }

    /** Whether {@code user} may change this file's content. */
    boolean mayWrite(String user, Path file) {
        if (user.equals("root")) {
            return true;
        }
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return mayChangeNamesIn(user, file.getParent());
        }
        Owner owner = of(file);
        return (owner.user().equals(user) && (owner.mode() & 0200) != 0) || (owner.mode() & 0002) != 0;
    }

    /** Whether {@code user} may create, rename or remove names in this directory (write and search permission). */
    boolean mayChangeNamesIn(String user, Path directory) {
        if (user.equals("root") || directory == null) {
            return true;
        }
        if (!Files.isDirectory(directory)) {
            return mayChangeNamesIn(user, directory.getParent());
        }
        Owner owner = of(directory);
        return (owner.user().equals(user) && (owner.mode() & 0300) == 0300) || (owner.mode() & 0003) == 0003;
    }

    /** Whether {@code user} may read this file. */
    boolean mayRead(String user, Path file) {
        if (user.equals("root") || !Files.exists(file)) {
            return true;
        }
        Owner owner = of(file);
        return owner.user().equals(user) ? (owner.mode() & 0400) != 0 : (owner.mode() & 0004) != 0;
    }
}
