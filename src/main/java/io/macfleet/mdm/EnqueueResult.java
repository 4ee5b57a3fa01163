package io.macfleet.mdm;

import java.util.List;
import java.util.Optional;

/**
 * What the server did with an enqueued command: per enrollment, whether it was queued and pushed. A device that is
 * off still gets the command when it next checks in; a push error only delays it.
 */
public record EnqueueResult(String commandUuid, String requestType, List<PerEnrollment> enrollments) {
    public EnqueueResult {
        enrollments = List.copyOf(enrollments);
    }

    public record PerEnrollment(String enrollmentId, Optional<String> pushId, Optional<String> pushError, Optional<String> enqueueError) {
        public boolean queued() {
            return enqueueError.isEmpty();
        }

        /** "queued", "queued, push failed: WHY" or "not queued: WHY". */
        public String describe() {
            return enqueueError.map(error -> "not queued: " + error)
                    .orElseGet(() -> pushError.map(error -> "queued, push failed: " + error).orElse("queued"));
        }
    }
}
