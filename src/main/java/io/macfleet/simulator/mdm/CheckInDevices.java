package io.macfleet.simulator.mdm;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Simulated Macs enrolled in a real MDM server (NanoHUB) over Apple's check-in protocol ({@link CheckInChannel}):
 * {@link #enroll} sends Authenticate and TokenUpdate with a device identity certificate from the given CA, then the
 * device checks in every tick (command queue, declarations when told, status reports). The devices behave exactly as
 * those of the in-process {@link SimulatedNanoHub}.
 */
public final class CheckInDevices implements MdmDevices, AutoCloseable {
    /** The APNs topic in the device's enrollment profile; NanoHUB stores it (a push would need its certificate). */
    public static final String TOPIC = "com.apple.mgmt.External.macfleet-simulator";

    private final URI serverUrl;
    private final URI checkInUrl;
    private final String certificateHeader;
    private final MdmCertificateAuthority authority;
    private final UpdateTimings timings;
    private final UpdateCatalog catalog = new UpdateCatalog();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    private final ScheduledExecutorService ticks;
    private final Map<String, SimulatedMdmDevice> devices = new ConcurrentHashMap<>();
    private final Map<String, CheckInChannel> channels = new ConcurrentHashMap<>();
    private final Map<String, ScheduledFuture<?>> tickers = new ConcurrentHashMap<>();
    private final Map<String, String> lastErrors = new ConcurrentHashMap<>();

    /**
     * @param serverUrl         the ServerURL of the enrollment profile (NanoHUB: {@code /mdm})
     * @param checkInUrl        the CheckInURL ({@code /checkin} when NanoHUB runs with {@code -checkin}, else the ServerURL)
     * @param certificateHeader the header NanoHUB reads the device certificate from ({@code -cert-header})
     */
    public CheckInDevices(URI serverUrl, URI checkInUrl, String certificateHeader, MdmCertificateAuthority authority, UpdateTimings timings) {
        this.serverUrl = serverUrl;
        this.checkInUrl = checkInUrl;
        this.certificateHeader = certificateHeader;
        this.authority = authority;
        this.timings = timings;
        this.ticks = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "mdm-check-in-devices");
            thread.setDaemon(true);
            return thread;
        });
    }

    @Override
    public UpdateCatalog catalog() {
        return catalog;
    }

    /** Enrolls a Mac as its enrollment profile would: Authenticate, TokenUpdate, then a check-in every tick. */
    @Override
    public SimulatedMdmDevice enroll(String enrollmentId, DeviceHost host) {
        CheckInChannel channel = new CheckInChannel(enrollmentId, TOPIC, serverUrl, checkInUrl, certificateHeader,
                MdmCertificateAuthority.rfc9440(authority.issueDevice(enrollmentId)), http, Duration.ofSeconds(10));
        channel.authenticate("SIM" + Integer.toHexString(enrollmentId.hashCode()).toUpperCase(java.util.Locale.ROOT), host.modelIdentifier(),
                host.release().version(), host.release().build());
        channel.tokenUpdate();
        SimulatedMdmDevice device = new SimulatedMdmDevice(enrollmentId, host, timings, catalog, channel);
        if (devices.putIfAbsent(enrollmentId, device) != null) {
            throw new IllegalArgumentException("enrollment " + enrollmentId + " is already enrolled");
        }
        channels.put(enrollmentId, channel);
        // HTTP per check-in: not faster than every 50 ms, so four Macs do not keep a loaded machine busy.
        long period = Math.max(50, timings.tick().toMillis());
        tickers.put(enrollmentId, ticks.scheduleWithFixedDelay(() -> {
            try {
                device.tick();
                lastErrors.remove(enrollmentId);
            } catch (RuntimeException e) {
                if (ticks.isShutdown()) {
                    return;
                }
                if (!String.valueOf(e.getMessage()).equals(lastErrors.put(enrollmentId, String.valueOf(e.getMessage())))) {
                    System.err.println("simulated MDM client " + enrollmentId + ": " + e.getMessage());
                }
            }
        }, 0, period, TimeUnit.MILLISECONDS));
        return device;
    }

    /** The Mac leaves MDM (its enrollment profile removed): CheckOut, and it checks in no more. */
    public void checkOut(String enrollmentId) {
        ScheduledFuture<?> ticker = tickers.remove(enrollmentId);
        if (ticker != null) {
            ticker.cancel(false);
        }
        devices.remove(enrollmentId);
        CheckInChannel channel = channels.remove(enrollmentId);
        if (channel != null) {
            channel.checkOut();
        }
    }

    @Override
    public SimulatedMdmDevice device(String enrollmentId) {
        SimulatedMdmDevice device = devices.get(enrollmentId);
        if (device == null) {
            throw new IllegalArgumentException("no simulated device enrolled as " + enrollmentId + " (enrolled: " + devices.keySet() + ")");
        }
        return device;
    }

    /** Every declaration revision the device fetched from the server ({@code identifier@token}). */
    @Override
    public List<String> deliveries(String enrollmentId) {
        CheckInChannel channel = channels.get(enrollmentId);
        return channel == null ? List.of() : channel.fetches();
    }

    /**
     * Sends one more status report from a device, as a Mac does whenever any subscribed item changes (tests: many
     * reports that do not carry the software-update items).
     */
    public void report(String enrollmentId, com.fasterxml.jackson.databind.node.ObjectNode report) {
        CheckInChannel channel = channels.get(enrollmentId);
        if (channel == null) {
            throw new IllegalArgumentException("no simulated device enrolled as " + enrollmentId);
        }
        channel.report(report);
    }

    /** The newest failure of a device's check-in, if its last one failed (for test messages). */
    public Map<String, String> lastErrors() {
        return Map.copyOf(lastErrors);
    }

    @Override
    public void close() {
        ticks.shutdownNow();
        http.close();
    }
}
