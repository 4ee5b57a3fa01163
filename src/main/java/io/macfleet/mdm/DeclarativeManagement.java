package io.macfleet.mdm;

import java.util.List;
import java.util.Optional;

/**
 * The declaration-level surface of a DDM-capable MDM server (NanoHUB/KMFDDM first). Every method either returns what
 * the server said or throws {@link MdmServerException}; none retries by itself (the campaign decides), and each call
 * is bounded by the adapter's deadline.
 */
public interface DeclarativeManagement {

    /** The server as named in messages ({@code kind URL}); never includes a credential. */
    String describe();

    /** Stores or replaces a declaration. A change makes the server sync every device whose sets hold it. */
    Change putDeclaration(Declaration declaration);

    /** Adds a declaration to a named set (created on first use). */
    Change addToSet(String set, String declarationIdentifier);

    /** Assigns a set to an enrollment; a change sends the DeclarativeManagement sync to that device. */
    Change assignSet(String enrollmentId, String set);

    /** The last reported status of every declaration on each enrollment (empty for one that never reported). */
    List<DeclarationStatus> declarationStatus(List<String> enrollmentIds);

    /** Extracted status values whose path starts with {@code pathPrefix} (e.g. {@code .StatusItems.device.}). */
    List<StatusValue> statusValues(List<String> enrollmentIds, String pathPrefix);

    /** A raw status report, 0 = newest; empty when the device has sent fewer reports. */
    Optional<StatusReport> statusReport(String enrollmentId, int index);

    /** The OS-update status items of one device, assembled from whatever the server keeps. */
    SoftwareUpdateStatus softwareUpdateStatus(String enrollmentId);

    /** Enqueues a raw command to enrollments and asks the server to push. */
    EnqueueResult enqueue(List<String> enrollmentIds, MdmCommand command);

    /** What the server knows about an enrollment. */
    EnrollmentState enrollment(String enrollmentId);
}
