package io.macfleet.deployment;

import java.io.IOException;

/**
 * Runs one command line on a Mac and returns what it answered. Deployment needs only this and an SFTP channel
 * from a connection, so it can run over macfleet's SSH runs and, in tests, over a bare SSHJ client.
 */
@FunctionalInterface
public interface RemoteShell {

    Answer run(String commandLine) throws IOException;

    /** Runs one program with its arguments, each quoted as one word. Implementations that take words override it. */
    default Answer run(String program, java.util.List<String> arguments) throws IOException {
        StringBuilder line = new StringBuilder(program);
        arguments.forEach(argument -> line.append(' ').append(quote(argument)));
        return run(line.toString());
    }

    /** What a command answered. */
    record Answer(int exitStatus, String stdout, String stderr) {
    }

    /** Quotes one word for the remote POSIX shell: single quotes, an embedded quote closed, escaped and reopened. */
    static String quote(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }
}
