package io.macfleet.deployment;

import java.io.IOException;

/**
 * Runs one command line on a Mac and returns what it answered. Deployment needs only this and an SFTP channel
 * from a connection, so it can run over macfleet's SSH runs and, in tests, over a bare SSHJ client.
 */
@FunctionalInterface
public interface RemoteShell {

    Answer run(String commandLine) throws IOException;

    /** What a command answered. */
    record Answer(int exitStatus, String stdout, String stderr) {
    }

    /** Quotes one word for the remote POSIX shell: single quotes, an embedded quote closed, escaped and reopened. */
    static String quote(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }
}
