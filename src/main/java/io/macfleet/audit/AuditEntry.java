package io.macfleet.audit;

/** An audit event as stored, with its sequence number. */
public record AuditEntry(long id, AuditEvent event) {
}
