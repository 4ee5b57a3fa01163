/**
 * Driving the fleet's MDM server (macfleet is not one). Two layers:
 * <ul>
 *   <li>{@link io.macfleet.mdm.DeclarativeManagement}: the declaration-level surface a DDM server such as NanoHUB
 *       (KMFDDM inside) exposes: put declarations, group them in sets, assign sets to enrollments, read what the
 *       devices report, enqueue raw MDM commands.</li>
 *   <li>{@link io.macfleet.mdm.OsUpdateEnforcement}: what an OS-update campaign needs, whatever the server: enforce
 *       one exact target on a group of enrollments, read each device's update state. NanoHUB gets it by composing
 *       declarations ({@link io.macfleet.mdm.DeclarativeOsUpdates}); Fleet and Jamf Pro adapters would implement it
 *       directly on their own update features (docs/os-updates.md).</li>
 * </ul>
 * Everything crossing this package's boundary is a record or an enum; a misbehaving server is always an
 * {@link io.macfleet.mdm.MdmServerException} naming the server, the request and what went wrong.
 */
package io.macfleet.mdm;
