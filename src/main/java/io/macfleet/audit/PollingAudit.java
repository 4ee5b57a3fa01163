package io.macfleet.audit;

/**
 * The audit log as the service's own read-only polling writes it (the observation loop every minute, the node
 * supervision every few seconds): a successful {@code ssh.exec} is not an operator's action and not worth a row each
 * (one supervised cluster of four Macs wrote about 11,000 an hour); a failed one, a host key decision and every other
 * action are recorded as usual. What the supervisor decides and does (a restart, an alert) it records as its own rows.
 */
public final class PollingAudit {

    private PollingAudit() {
    }

    public static AuditLog failuresOnly(AuditLog log) {
        return event -> {
            if (!"ssh.exec".equals(event.action()) || event.outcome() == AuditEvent.Outcome.FAILURE) {
                log.record(event);
            }
        };
    }
}
