package io.macfleet.mdm.real;

import io.macfleet.mdm.nanohub.NanoHubClient;
import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.mdm.CheckInDevices;
import io.macfleet.simulator.mdm.MdmCertificateAuthority;
import io.macfleet.simulator.mdm.NanoHubProcess;
import io.macfleet.simulator.mdm.UpdateTimings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The real NanoHUB for tests: the binary in {@code ../shared/tools/nanohub/bin/nanohub} beside the project (CI has it;
 * a fresh clone elsewhere does not: then the test is skipped, or fails with CI=true), a test CA for the simulated
 * Macs' identity certificates, the API key in a file under the test's directory, and a client built on it.
 */
public final class RealNanoHub implements AutoCloseable {
    public static final String API_KEY = "real-nanohub-test-key";

    public final NanoHubProcess server;
    public final MdmCertificateAuthority authority;
    public final CheckInDevices devices;
    public final Path keyFile;

    private RealNanoHub(NanoHubProcess server, MdmCertificateAuthority authority, CheckInDevices devices, Path keyFile) {
        this.server = server;
        this.authority = authority;
        this.devices = devices;
        this.keyFile = keyFile;
    }

    /** The binary, or the test is skipped (fails on CI). */
    public static Path binary() {
        Optional<Path> found = Optional.ofNullable(System.getenv("MACFLEET_NANOHUB_BINARY")).map(Path::of)
                .or(() -> Optional.of(Path.of("..", "shared", "tools", "nanohub", "bin", "nanohub").toAbsolutePath().normalize()))
                .filter(Files::isExecutable);
        if (found.isEmpty()) {
            String reason = "the real NanoHUB is not at ../shared/tools/nanohub/bin/nanohub beside the project (nor MACFLEET_NANOHUB_BINARY)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(reason + "; CI=true requires it");
            }
            Assumptions.abort(reason + "; skipping the real-NanoHUB test");
        }
        return found.get();
    }

    /** NanoHUB's source tree beside the binary ({@code ../src}), whose vendored MySQL schemas the MySQL tests load. */
    public static Path source() {
        return binary().getParent().getParent().resolve("src");
    }

    /** NanoHUB with {@code storage} ({@code file}, or {@code mysql} with {@code dsn}) and devices ticking at {@code timings}. */
    public static RealNanoHub start(Path directory, String storage, String dsn, UpdateTimings timings) throws IOException {
        Path binary = binary();
        MdmCertificateAuthority authority = MdmCertificateAuthority.create("macfleet test MDM CA");
        NanoHubProcess server = NanoHubProcess.start(binary, directory.resolve("nanohub"), API_KEY, authority, storage, dsn);
        Path keyFile = directory.resolve("nanohub.key");
        Files.writeString(keyFile, API_KEY + "\n");
        CheckInDevices devices = new CheckInDevices(server.serverUrl(), server.checkInUrl(), NanoHubProcess.CERTIFICATE_HEADER, authority, timings);
        return new RealNanoHub(server, authority, devices, keyFile);
    }

    public NanoHubClient client(Duration deadline) {
        return new NanoHubClient(server.url(), SecretReference.of("file:" + keyFile), deadline);
    }

    @Override
    public void close() {
        devices.close();
        server.close();
    }
}
