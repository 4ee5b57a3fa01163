package io.macfleet.mdm;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Optional;

/**
 * One raw status report a device sent, as the server stored it. Devices report incrementally (only the items that
 * changed since the last report the server acknowledged), so one report rarely holds every item.
 * {@code index} 0 is the newest.
 */
public record StatusReport(String enrollmentId, int index, Optional<String> statusId, Optional<Instant> received, JsonNode body) {
}
