package io.macfleet.cabling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.facts.FactsParseException;
import io.macfleet.facts.LinkSpeed;
import io.macfleet.facts.ThunderboltFacts;
import io.macfleet.facts.ThunderboltParser;
import io.macfleet.inventory.PortReference;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The parsers and the topology against real captures (see macos-samples/SOURCES.md). */
class RealCapturesTest {

    static String sample(String name) throws IOException {
        try (InputStream input = RealCapturesTest.class.getResourceAsStream("/macos-samples/system_profiler-SPThunderboltDataType/" + name)) {
            return new String(input.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void macStudioCaptureWithADrive() throws IOException {
        ThunderboltFacts studio = ThunderboltParser.parse(sample("mac-studio-m3-ultra-omlx.json"));

        assertThat(studio.buses()).hasSize(6);
        assertThat(studio.buses()).allSatisfy(bus -> assertThat(bus.hostName()).isEqualTo("Mac Studio"));
        assertThat(studio.busForReceptacle(2).orElseThrow().directPeerHost().orElseThrow().deviceName()).isEqualTo("Mac17,7");
        assertThat(studio.busForReceptacle(2).orElseThrow().speed()).contains(new LinkSpeed(80, false));
        assertThat(studio.busForReceptacle(4).orElseThrow().directPeerHost()).isEmpty();
        assertThat(studio.busForReceptacle(4).orElseThrow().otherDevices()).singleElement()
                .satisfies(device -> assertThat(device.describe()).isEqualTo("Envoy Ultra"));
        assertThat(studio.busForReceptacle(6).orElseThrow().speed()).contains(new LinkSpeed(120, true));
        assertThat(studio.busForReceptacle(6).orElseThrow().connected()).isFalse();
    }

    @Test
    void macBookInTheMeshAndDriveOnTheStudio(@TempDir Path captures) throws IOException {
        write(captures.resolve("macbook"), sample("macbook-pro-m5-max-omlx.json"));
        write(captures.resolve("studio"), sample("mac-studio-m3-ultra-omlx.json"));

        List<MachineCablingFacts> facts = CaptureDirectory.read(captures);
        CablingReport report = CablingCheck.check(PlannedTopology.fullMesh("pair", List.of("macbook", "studio")), facts, Optional.empty());

        assertThat(report.links()).singleElement().satisfies(link -> {
            assertThat(link.toString()).isEqualTo("macbook:1 <-> studio:2");
            assertThat(link.confirmed()).isTrue();
            assertThat(link.isThunderbolt5()).isTrue();
        });
        assertThat(report.foreignAttachments()).singleElement().satisfies(attachment -> assertThat(attachment.port()).isEqualTo(new PortReference("studio", 4)));
        assertThat(report.fullMesh()).isTrue();
        assertThat(report.findings()).extracting(Finding::code)
                .containsExactly(Finding.Code.OUTSIDE_DEVICE, Finding.Code.RDMA_STATUS_UNKNOWN, Finding.Code.RDMA_STATUS_UNKNOWN);
    }

    @Test
    void garbageGivesAPositionedError() {
        assertThatThrownBy(() -> ThunderboltParser.parse("{\"SPThunderboltDataType\" : [ {\"_name\": \"x\", \"receptacle_1_tag\": {\"receptacle_id_key\": \"two\"}} ]}"))
                .isInstanceOf(FactsParseException.class)
                .hasMessage("system_profiler SPThunderboltDataType -json: SPThunderboltDataType[0].receptacle_1_tag.receptacle_id_key: expected a port number, got 'two'");
        assertThatThrownBy(() -> ThunderboltParser.parse("zsh: command not found: system_profiler"))
                .isInstanceOf(FactsParseException.class)
                .hasMessageStartingWith("system_profiler SPThunderboltDataType -json: not valid JSON at line 1, column");
        assertThatThrownBy(() -> ThunderboltParser.parse("{\"SPHardwareDataType\": []}"))
                .hasMessage("system_profiler SPThunderboltDataType -json: missing key SPThunderboltDataType (is this the output of system_profiler SPThunderboltDataType -json?)");
    }

    @Test
    void missingAndBrokenCapturesAreAllReportedByFile(@TempDir Path captures) throws IOException {
        Files.createDirectories(captures.resolve("studio-01"));
        Files.writeString(captures.resolve("studio-01").resolve(CaptureDirectory.THUNDERBOLT), "{}");
        write(captures.resolve("studio-02"), "{\"SPThunderboltDataType\": []}");
        Files.writeString(captures.resolve("studio-02").resolve(CaptureDirectory.RDMA_STATUS), "maybe\n");

        assertThatThrownBy(() -> CaptureDirectory.read(captures))
                .isInstanceOf(CaptureDirectory.CaptureException.class)
                .hasMessageContaining(captures.resolve("studio-01").resolve(CaptureDirectory.THUNDERBOLT) + ": system_profiler SPThunderboltDataType -json: missing key SPThunderboltDataType")
                .hasMessageContaining(captures.resolve("studio-02").resolve(CaptureDirectory.RDMA_STATUS) + ": rdma_ctl status: expected 'enabled' or 'disabled', got 'maybe'");
    }

    private static void write(Path machine, String thunderbolt) throws IOException {
        Files.createDirectories(machine);
        Files.writeString(machine.resolve(CaptureDirectory.THUNDERBOLT), thunderbolt);
        Files.writeString(machine.resolve(CaptureDirectory.HARDWARE_PORTS), ClusterFixture.hardwarePorts());
    }
}
