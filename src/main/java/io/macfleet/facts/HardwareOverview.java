package io.macfleet.facts;

import java.util.OptionalInt;

/**
 * {@code system_profiler -json SPHardwareDataType}: what the machine is.
 *
 * @param modelIdentifier {@code machine_model}, e.g. "Mac15,14"
 * @param modelName {@code machine_name}, e.g. "Mac Studio"
 * @param chip {@code chip_type}, e.g. "Apple M3 Ultra"
 * @param cpuCores total CPU cores from {@code number_processors} ("proc 32:24:8:0" is 32 cores: 24 performance, 8 efficiency)
 * @param performanceCores performance cores, when reported
 * @param efficiencyCores efficiency cores, when reported
 * @param memoryBytes {@code physical_memory} ("512 GB") in bytes
 * @param serialNumber {@code serial_number}
 * @param hardwareUuid {@code platform_UUID}
 */
public record HardwareOverview(String modelIdentifier, String modelName, String chip, int cpuCores,
                               OptionalInt performanceCores, OptionalInt efficiencyCores, long memoryBytes,
                               String serialNumber, String hardwareUuid) {

    public long memoryGigabytes() {
        return memoryBytes >> 30;
    }
}
