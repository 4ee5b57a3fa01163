/** Leases: which {@code macfleet serve} instance does a piece of continuous work when several share one database. */
package io.macfleet.lease;
