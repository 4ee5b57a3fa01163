package io.macfleet.mdm;

import java.util.Optional;

/**
 * What macfleet needs from any MDM server, whatever its API: OS-update enforcement on a group of enrollments and each
 * device's progress ({@link OsUpdateEnforcement}), and whether the server knows an enrollment. Shaped so that an MDM
 * without declaration sets fits: Fleet's {@code mdm.macos_updates} per team ({@code PATCH /api/v1/fleet/teams/{id}}
 * with {@code minimum_version} and {@code deadline}; Fleet turns it into the same enforcement declaration) is an
 * {@code enforce}, its host details a {@code status} and {@code enrollment} (docs/os-updates.md, "Other MDM
 * servers"). Opened by {@link MdmAdapters} from the inventory's {@code mdm:} section; closed after use.
 */
public interface MdmConnection extends OsUpdateEnforcement, AutoCloseable {

    /** The server as named in messages ({@code kind URL}); never includes a credential. */
    String describe();

    /** What the server knows about an enrollment (seen reporting; its bootstrap token where the server tells). */
    EnrollmentState enrollment(String enrollmentId);

    /**
     * The declaration-level API when the server has one (NanoHUB/KMFDDM): the campaign then records each declaration,
     * set membership and assignment it wrote. Servers that only take a target (Fleet, Jamf) answer empty.
     */
    default Optional<DeclarativeManagement> declarative() {
        return Optional.empty();
    }

    @Override
    default void close() {
    }

    /** A connection over any DDM server's declaration API: enforcement through {@link DeclarativeOsUpdates}. */
    static MdmConnection declarative(DeclarativeManagement server) {
        DeclarativeOsUpdates updates = new DeclarativeOsUpdates(server);
        return new MdmConnection() {
            @Override
            public String describe() {
                return server.describe();
            }

            @Override
            public EnrollmentState enrollment(String enrollmentId) {
                return server.enrollment(enrollmentId);
            }

            @Override
            public java.util.List<Change> enforce(String group, OsUpdateTarget target, java.util.List<String> enrollmentIds) {
                return updates.enforce(group, target, enrollmentIds);
            }

            @Override
            public java.util.List<SoftwareUpdateStatus> status(java.util.List<String> enrollmentIds) {
                return updates.status(enrollmentIds);
            }

            @Override
            public Optional<DeclarativeManagement> declarative() {
                return Optional.of(server);
            }

            @Override
            public void close() {
                if (server instanceof AutoCloseable closeable) {
                    try {
                        closeable.close();
                    } catch (Exception ignored) {
                        // closing an HTTP client: nothing to report
                    }
                }
            }
        };
    }
}
