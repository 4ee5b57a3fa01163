package io.macfleet.inventory;

import io.macfleet.secrets.SecretReference;

/** The MDM server the fleet is enrolled in: its kind (which adapter drives it), URL and API token reference (or null). */
public record MdmServer(String kind, String url, SecretReference apiToken) {
    /** Today's only kind, and the default of the inventory's {@code mdm.kind}. */
    public static final String DEFAULT_KIND = "nanohub";

    public MdmServer {
        kind = kind == null || kind.isBlank() ? DEFAULT_KIND : kind;
    }

    public MdmServer(String url, SecretReference apiToken) {
        this(DEFAULT_KIND, url, apiToken);
    }
}
