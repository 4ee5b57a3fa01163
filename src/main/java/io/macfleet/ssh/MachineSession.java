package io.macfleet.ssh;

/** One machine within a run: commands sent through it share the run's connection to the machine. */
public final class MachineSession {

    private final SshRun run;
    private final SshTarget target;

    MachineSession(SshRun run, SshTarget target) {
        this.run = run;
        this.target = target;
    }

    public SshTarget target() {
        return target;
    }

    /** Reaches the machine now (connect, host key, authentication) within the connect timeout. */
    public void connect() {
        run.connect(target);
    }

    /** The run's default limits. */
    public ExecutionLimits limits() {
        return run.limits();
    }

    public CommandResult execute(Command command) {
        return run.execute(target, command);
    }

    public CommandResult execute(Command command, ExecutionLimits limits) {
        return run.execute(target, command, limits);
    }

    /** SFTP work on this machine's connection; see {@link SshRun#withSftp}. */
    public <T> T withSftp(String description, SshRun.SftpWork<T> work) {
        return run.withSftp(target, description, work);
    }

    /** SFTP work on up to {@code connections} connections to this machine; see {@link SshRun#withSftpStripes}. */
    public <T> T withSftpStripes(String description, int connections, SshRun.StripedSftpWork<T> work) {
        return run.withSftpStripes(target, description, connections, work);
    }

    /** Writes a small file atomically over SFTP; see {@link SshRun#upload}. */
    public void upload(String remotePath, byte[] content, int mode) {
        run.upload(target, remotePath, content, mode);
    }
}
