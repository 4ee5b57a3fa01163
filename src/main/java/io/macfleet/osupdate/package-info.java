/**
 * OS-update campaigns: a cluster is updated as one (preflight every node, drain, update all nodes together, verify
 * exact version and build, undrain), state in the database, resumable after kill -9. The way a Mac is updated is an
 * extension point, {@link io.macfleet.osupdate.UpdateMethod} ({@code mdm}, {@code ssh}).
 */
package io.macfleet.osupdate;
