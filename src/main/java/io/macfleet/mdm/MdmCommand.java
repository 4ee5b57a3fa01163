package io.macfleet.mdm;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * A raw MDM command (Apple's {@code Command} dictionary plus {@code CommandUUID}). Only the commands a campaign
 * needs; a new one is a new record here and a case in each adapter's encoder.
 */
public sealed interface MdmCommand {
    String requestType();

    String commandUuid();

    /** RestartDevice: macOS restarts; {@code notifyUser} shows a prompt instead (macOS 11.3+). */
    record RestartDevice(String commandUuid, boolean notifyUser) implements MdmCommand {
        public RestartDevice {
            Objects.requireNonNull(commandUuid, "commandUuid");
        }

        public static RestartDevice now() {
            return new RestartDevice(UUID.randomUUID().toString(), false);
        }

        @Override
        public String requestType() {
            return "RestartDevice";
        }
    }

    /** DeviceInformation with the query names Apple defines (e.g. OSVersion, BuildVersion, ModelName). */
    record DeviceInformation(String commandUuid, List<String> queries) implements MdmCommand {
        public DeviceInformation {
            Objects.requireNonNull(commandUuid, "commandUuid");
            queries = List.copyOf(queries);
            if (queries.isEmpty()) {
                throw new IllegalArgumentException("DeviceInformation needs at least one query");
            }
        }

        public static DeviceInformation of(String... queries) {
            return new DeviceInformation(UUID.randomUUID().toString(), List.of(queries));
        }

        @Override
        public String requestType() {
            return "DeviceInformation";
        }
    }
}
