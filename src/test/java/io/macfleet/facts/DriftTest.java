package io.macfleet.facts;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.inventory.Machine;
import io.macfleet.inventory.SshSettings;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Drift rules on facts from the real samples (a Mac14,14 with 512 GB on macOS 26.2). */
class DriftTest {

    private static final MachineFacts FACTS = FactsGatherer.parse("studio-01", Instant.parse("2026-11-21T23:00:00Z"), MacosSamples.outputs());

    private static Machine machine(String serial, Integer memoryGb, String model) {
        return new Machine("studio-01", "192.168.50.11", new SshSettings(SshSettings.DEFAULT_USER, SshSettings.DEFAULT_PORT, null, null, null),
                serial, model, memoryGb, Machine.Role.WORKER, "llm-a", List.of(), null, null, Map.of());
    }

    @Test
    void matchingOrUnstatedFieldsAreNoDrift() {
        assertThat(Drift.compare(machine(FACTS.serialNumber().toLowerCase(), 512, "Mac14,14"), "26.2", FACTS).drifted()).isFalse();
        assertThat(Drift.compare(machine(null, null, null), null, FACTS).drifted()).isFalse();
    }

    @Test
    void everyDifferenceIsNamed() {
        Drift.Report report = Drift.compare(machine("C02XYZ", 256, "Mac15,14"), "26.3", FACTS);
        assertThat(report.differences()).extracting(Drift.Difference::field).containsExactly("serialNumber", "memoryGb", "model", "macosVersion");
        assertThat(report.differences()).extracting(Drift.Difference::message).containsExactly(
                "studio-01: serial number is " + FACTS.serialNumber() + ", the inventory says C02XYZ (a different Mac answers at this address, or the inventory is wrong)",
                "studio-01: has 512 GB of memory, the inventory says 256 GB",
                "studio-01: is a Mac14,14 (Mac Studio, Apple M2 Ultra), the inventory says Mac15,14",
                "studio-01: runs macOS 26.2 (25C56), the cluster llm-a targets 26.3");
    }

    @Test
    void noFactsIsReported() {
        Drift.Report report = Drift.compare(machine(null, null, null), "26.2", null);
        assertThat(report.drifted()).isTrue();
        assertThat(report.observedAt()).isNull();
        assertThat(report.differences()).singleElement().extracting(Drift.Difference::field).isEqualTo("facts");
    }

    @Test
    void aTargetVersionMatchesOnTheComponentsItNames() {
        assertThat(Drift.sameVersion("26.2", "26.2")).isTrue();
        assertThat(Drift.sameVersion("26.2", "26.2.1")).isTrue();
        assertThat(Drift.sameVersion("26", "26.2")).isTrue();
        assertThat(Drift.sameVersion("26.2.0", "26.2")).isTrue();
        assertThat(Drift.sameVersion("26.2", "26.1")).isFalse();
        assertThat(Drift.sameVersion("26.2.1", "26.2")).isFalse();
        assertThat(Drift.sameVersion("26.2", "27.2")).isFalse();
    }
}
