package io.macfleet.mdm.real;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.mdm.DeclarationStatus;
import io.macfleet.mdm.DeclarativeOsUpdates;
import io.macfleet.mdm.EnqueueResult;
import io.macfleet.mdm.MdmCommand;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.mdm.SoftwareUpdateStatus;
import io.macfleet.mdm.nanohub.NanoHubClient;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.mdm.StandaloneHost;
import io.macfleet.simulator.mdm.UpdateTimings;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A simulated Mac speaking Apple's MDM protocol to the real NanoHUB (file storage): enrollment with an identity
 * certificate from a test CA, the command queue, and a DDM-enforced update from 26.1 to 26.2 read back through the
 * client.
 */
class RealNanoHubDeviceTest {
    private static final String MODEL = "Mac15,14";
    private static final String ID = "6C1F0000-0000-4000-8000-0000000000A1";

    @TempDir
    Path directory;

    private RealNanoHub hub;
    private NanoHubClient client;

    @BeforeEach
    void start() throws Exception {
        hub = RealNanoHub.start(directory, "file", null, new UpdateTimings(Duration.ofMillis(50), Duration.ofMillis(300), Duration.ofMillis(300), Duration.ofMillis(600)));
        client = hub.client(Duration.ofSeconds(10));
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.close();
        }
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    void aSimulatedMacEnrollsTakesCommandsAndUpdatesThroughDeclarations() {
        StandaloneHost host = new StandaloneHost(MODEL, MacosRelease.of("26.1"), Duration.ofMillis(300));
        hub.devices.enroll(ID, host);

        EnqueueResult restart = client.enqueue(List.of(ID), new MdmCommand.DeviceInformation("cmd-info-1", List.of("OSVersion")));
        assertThat(restart.enrollments()).singleElement().satisfies(one -> assertThat(one.queued()).isTrue());
        await("the device answers the command", () -> hub.devices.device(ID).answeredCommands().stream().anyMatch(c -> c.commandUuid().equals("cmd-info-1")));

        OsUpdateTarget target = new OsUpdateTarget("26.2", Optional.of("25C56"), LocalDateTime.now().plusSeconds(3));
        new DeclarativeOsUpdates(client).enforce("llm-a", target, List.of(ID));

        await("the Mac runs 26.2 (25C56) as the server sees it", () -> {
            SoftwareUpdateStatus status = client.softwareUpdateStatus(ID);
            return status.osVersion().equals(Optional.of("26.2")) && status.buildVersion().equals(Optional.of("25C56"));
        });
        assertThat(host.release().build()).isEqualTo("25C56");
        assertThat(client.declarationStatus(List.of(ID))).extracting(DeclarationStatus::identifier).hasSize(4);
        assertThat(client.declarationStatus(List.of(ID))).allSatisfy(status -> assertThat(status.active()).as(status.toString()).isTrue());
        assertThat(hub.devices.deliveries(ID)).hasSize(4).doesNotHaveDuplicates();
        assertThat(client.enrollment(ID).declarativeStatusSeen()).isTrue();
    }

    private void await(String what, BooleanSupplier condition) {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < end) {
            if (condition.getAsBoolean()) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("timed out waiting for " + what + "; device errors " + hub.devices.lastErrors() + "\n" + hub.server.logTail());
    }
}
