package io.macfleet.audit;

/**
 * The append-only audit log. Every change of desired state and every action on a machine is recorded
 * through this interface; there is deliberately no way to change or delete an entry.
 */
public interface AuditLog {
    void record(AuditEvent event);
}
