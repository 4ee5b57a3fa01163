package io.macfleet.simulator.mdm;

import java.util.List;

/**
 * Simulated Macs enrolled in an MDM server: the in-process {@link SimulatedNanoHub} or a real NanoHUB reached over
 * Apple's check-in protocol ({@link CheckInDevices}). The same simulated Mac talks to either.
 */
public interface MdmDevices {

    /** Enrolls a Mac; from now on its MDM client checks in every tick. */
    SimulatedMdmDevice enroll(String enrollmentId, DeviceHost host);

    SimulatedMdmDevice device(String enrollmentId);

    /** What Apple offers each model, as this set of devices sees it. */
    UpdateCatalog catalog();

    /** Every declaration revision a device fetched ({@code identifier@token}); one revision fetched twice shows twice. */
    List<String> deliveries(String enrollmentId);
}
