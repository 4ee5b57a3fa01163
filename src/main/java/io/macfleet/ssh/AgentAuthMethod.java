package io.macfleet.ssh;

import net.schmizz.sshj.common.Buffer;
import net.schmizz.sshj.common.Message;
import net.schmizz.sshj.common.SSHPacket;
import net.schmizz.sshj.transport.TransportException;
import net.schmizz.sshj.userauth.UserAuthException;
import net.schmizz.sshj.userauth.method.AbstractAuthMethod;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * SSH "publickey" authentication (RFC 4252 7) with the identities of an ssh-agent. For each identity in turn
 * it asks the server whether the key would do (no signature), and only on SSH_MSG_USERAUTH_PK_OK lets the
 * agent sign; when the server refuses, SSHJ calls {@link #shouldRetry()} and the next identity is tried.
 * SSHJ's own AuthPublickey cannot be used: it signs with a private key held in this process.
 */
final class AgentAuthMethod extends AbstractAuthMethod {

    /** What RSA keys sign with: SHA-1 ("ssh-rsa") is refused by current OpenSSH, and SHA-256 is accepted by every sshd since OpenSSH 7.2. */
    static final String RSA_ALGORITHM = "rsa-sha2-256";

    /** How the message of a signing failure starts, so the connection can tell it from a refusal. */
    static final String SIGNING_FAILED = "the ssh-agent did not sign";

    private final SshAgentClient agent;
    private final List<SshAgentClient.Identity> identities;
    private final List<SshAgentClient.Identity> refused = new ArrayList<>();
    private int current;

    AgentAuthMethod(SshAgentClient agent, List<SshAgentClient.Identity> identities) {
        super("publickey");
        if (identities.isEmpty()) {
            throw new IllegalArgumentException("no identities to offer");
        }
        this.agent = agent;
        this.identities = List.copyOf(identities);
    }

    java.nio.file.Path socket() {
        return agent.socket();
    }

    /** The identities the server refused so far, in the order they were offered. */
    List<SshAgentClient.Identity> refused() {
        return List.copyOf(refused);
    }

    @Override
    public void request() throws UserAuthException, TransportException {
        params.getTransport().write(publickeyRequest(identities.get(current), false));
    }

    @Override
    public boolean shouldRetry() {
        refused.add(identities.get(current));
        if (current + 1 < identities.size()) {
            current++;
            return true;
        }
        return false;
    }

    @Override
    public void handle(Message message, SSHPacket packet) throws UserAuthException, TransportException {
        if (message != Message.USERAUTH_60) {
            super.handle(message, packet);
            return;
        }
        // SSH_MSG_USERAUTH_PK_OK: the server would accept this key; now prove we hold it.
        SshAgentClient.Identity identity = identities.get(current);
        SSHPacket signed = publickeyRequest(identity, true);
        byte[] data = new Buffer.PlainBuffer()
                .putString(params.getTransport().getSessionID())
                .putBuffer(signed) // the request so far, from its message number on (RFC 4252 7)
                .getCompactData();
        byte[] signature;
        try {
            signature = agent.sign(identity, data, isRsa(identity) ? SshAgentClient.SSH_AGENT_RSA_SHA2_256 : 0);
        } catch (IOException | RuntimeException e) {
            throw new UserAuthException(SIGNING_FAILED + " with " + identity.describe() + ": " + e.getMessage(), e);
        }
        signed.putString(signature);
        params.getTransport().write(signed);
    }

    private SSHPacket publickeyRequest(SshAgentClient.Identity identity, boolean withSignature) {
        return new SSHPacket(Message.USERAUTH_REQUEST)
                .putString(params.getUsername())
                .putString(params.getNextServiceName())
                .putString(getName())
                .putBoolean(withSignature)
                .putString(algorithm(identity))
                .putString(identity.publicKeyBlob());
    }

    private static boolean isRsa(SshAgentClient.Identity identity) {
        String type = identity.keyType();
        return type.equals("ssh-rsa") || type.equals("ssh-rsa-cert-v01@openssh.com");
    }

    /** The public key algorithm to announce: the key type, except that RSA keys sign with SHA-256 (RFC 8332). */
    static String algorithm(SshAgentClient.Identity identity) {
        return switch (identity.keyType()) {
            case "ssh-rsa" -> RSA_ALGORITHM;
            case "ssh-rsa-cert-v01@openssh.com" -> RSA_ALGORITHM + "-cert-v01@openssh.com";
            default -> identity.keyType();
        };
    }
}
