package io.macfleet.mdm.nanohub;

import io.macfleet.inventory.MdmServer;
import io.macfleet.mdm.MdmAdapter;
import io.macfleet.mdm.MdmConnection;
import java.net.URI;
import java.time.Duration;

/** {@code kind: nanohub}: micromdm/nanohub's API with the key as HTTP Basic password; DDM through KMFDDM. */
public final class NanoHubAdapter implements MdmAdapter {
    public static final String KIND = "nanohub";

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public MdmConnection connect(MdmServer server, Duration deadline) {
        if (server.apiToken() == null) {
            throw new IllegalArgumentException("the inventory's mdm: section (" + server.url()
                    + ") has no apiToken (a secret reference such as env:MACFLEET_NANOHUB_API_KEY)");
        }
        return MdmConnection.declarative(new NanoHubClient(URI.create(server.url()), server.apiToken(), deadline));
    }
}
