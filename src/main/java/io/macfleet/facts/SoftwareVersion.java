package io.macfleet.facts;

/**
 * {@code sw_vers}: product name, version and build.
 */
public record SoftwareVersion(String productName, String productVersion, String buildVersion) {
}
