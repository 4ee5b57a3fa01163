package io.macfleet.ssh;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** An audit log that keeps the events in memory, for assertions. */
final class InMemoryAuditLog implements AuditLog {
    private final List<AuditEvent> events = new CopyOnWriteArrayList<>();

    @Override
    public void record(AuditEvent event) {
        events.add(event);
    }

    List<AuditEvent> events() {
        return List.copyOf(events);
    }

    List<AuditEvent> events(String action) {
        return events.stream().filter(event -> event.action().equals(action)).toList();
    }
}
