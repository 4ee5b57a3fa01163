package io.macfleet.ssh;

import io.macfleet.audit.AuditLog;
import net.schmizz.sshj.Config;
import net.schmizz.sshj.DefaultConfig;

import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * The entry point of the SSH layer: long-lived, shared by all work of a process. Work happens in a
 * {@link SshRun}, which reuses one connection per machine until it is closed.
 *
 * <pre>{@code
 * SshTransport ssh = new SshTransport(SshSettings.defaults("cli:alice"), new JdbcHostKeyStore(dataSource), auditLog);
 * List<MachineResult<String>> versions = ssh.onFleet(targets,
 *         machine -> machine.execute(Command.reading("sw_vers", "-productVersion")).requireSuccess().stdout().strip());
 * }</pre>
 */
public final class SshTransport {

    private final SshSettings settings;
    private final HostKeyStore hostKeys;
    private final AuditLog auditLog;
    private final Clock clock;
    // Building SSHJ's algorithm lists is not free; one configuration serves every connection.
    private final Config sshjConfig = sshjConfig();

    public SshTransport(SshSettings settings, HostKeyStore hostKeys, AuditLog auditLog) {
        this(settings, hostKeys, auditLog, Clock.systemUTC());
    }

    public SshTransport(SshSettings settings, HostKeyStore hostKeys, AuditLog auditLog, Clock clock) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.hostKeys = Objects.requireNonNull(hostKeys, "hostKeys");
        this.auditLog = Objects.requireNonNull(auditLog, "auditLog");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    public SshSettings settings() {
        return settings;
    }

    /** Starts a run: connections opened in it are reused and all closed by {@link SshRun#close()}. */
    public SshRun openRun() {
        return new SshRun(settings, hostKeys, auditLog, clock, sshjConfig);
    }

    /** One operation on every target in parallel, in a run of its own; results in the order of the targets. */
    public <T> List<MachineResult<T>> onFleet(Collection<SshTarget> targets, MachineOperation<T> operation) {
        try (SshRun run = openRun()) {
            return run.onFleet(targets, operation);
        }
    }

    /**
     * SSHJ's defaults with AES-GCM first, computed by the JDK ({@link JdkGcmCipher}). SSHJ offers chacha20-poly1305
     * first, which it computes in Java (BouncyCastle); the JDK's AES-GCM uses the CPU's AES and carry-less multiply
     * instructions, and needs no separate MAC. OpenSSH's sshd (the Macs') accepts both GCM variants by default,
     * and the order only expresses a preference: a server without them negotiates the next common cipher.
     */
    static Config sshjConfig() {
        DefaultConfig config = new DefaultConfig();
        List<String> preferred = List.of("aes128-gcm@openssh.com", "aes256-gcm@openssh.com");
        var ciphers = new java.util.ArrayList<>(config.getCipherFactories());
        // SSHJ's own GCM would run on BouncyCastle's Java AES (see JdkGcmCipher).
        ciphers.replaceAll(factory -> switch (factory.getName()) {
            case "aes128-gcm@openssh.com" -> JdkGcmCipher.factory(factory.getName(), 128);
            case "aes256-gcm@openssh.com" -> JdkGcmCipher.factory(factory.getName(), 256);
            default -> factory;
        });
        ciphers.sort(java.util.Comparator.comparingInt(factory -> {
            int rank = preferred.indexOf(factory.getName());
            return rank < 0 ? preferred.size() : rank;
        }));
        config.setCipherFactories(ciphers);
        return config;
    }

    /** Forgets a machine's recorded host key (after the new one was verified out of band). */
    public boolean forgetHostKey(String machine) {
        return hostKeys.forget(machine);
    }
}
