package io.macfleet.facts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A whole fact set from the real macOS samples; what missing or broken output gives; storage and history in H2. */
class FactsFromSamplesTest {

    private static final Instant OBSERVED = Instant.parse("2026-11-21T23:46:00.123456Z");

    @Test
    void aFactSetFromRealOutput() {
        MachineFacts facts = FactsGatherer.parse("studio-01", OBSERVED, MacosSamples.outputs());

        assertThat(facts.modelIdentifier()).isEqualTo("Mac14,14");
        assertThat(facts.modelName()).isEqualTo("Mac Studio");
        assertThat(facts.chip()).isEqualTo("Apple M2 Ultra");
        assertThat(facts.cpuCores()).isEqualTo(24);
        assertThat(facts.performanceCores()).isEqualTo(16);
        assertThat(facts.efficiencyCores()).isEqualTo(8);
        assertThat(facts.gpuCores()).isEqualTo(40);
        assertThat(facts.memoryBytes()).isEqualTo(549755813888L);
        assertThat(facts.hardwareUuid()).isEqualTo("00000000-1111-2222-3333-444444444444");
        assertThat(facts.macosVersion()).isEqualTo("26.2");
        assertThat(facts.macosBuild()).isEqualTo("25C56");
        assertThat(facts.rdmaEnabled()).isTrue();
        assertThat(facts.rdmaDevices()).containsExactly("rdma_en1", "rdma_en6", "rdma_en2");
        assertThat(facts.bootstrapTokenSupportedOnServer()).isTrue();
        assertThat(facts.bootstrapTokenEscrowed()).isTrue();
        assertThat(facts.uptimeSeconds()).isEqualTo(9 * 3600 + 53 * 60);
        assertThat(new FactsObservation(facts, MacosSamples.outputs()).wiredLimitMegabytes()).hasValue(0);
        assertThat(facts.freeDiskBytes()).isEqualTo(1739870612L * 1024);
        assertThat(facts.thunderboltBridgeActive()).isFalse();
        assertThat(facts.interfaces()).extracting(NetworkInterface::name).contains("en0", "bridge0");
        // The Mac Studio capture: a MacBook Pro on port 2 at 80 Gb/s, an OWC drive on port 4 (interfaces from the Studio's port map).
        MachineFacts.ThunderboltPort port2 = facts.thunderboltPorts().stream().filter(port -> port.port() == 2).findFirst().orElseThrow();
        assertThat(port2.connected()).isTrue();
        assertThat(port2.speedGbps()).isEqualTo(80.0);
        assertThat(port2.interfaceName()).isEqualTo("en3");
        assertThat(port2.peerModel()).startsWith("Mac");
        assertThat(port2.peerDomainUuid()).isNotBlank();
        MachineFacts.ThunderboltPort port4 = facts.thunderboltPorts().stream().filter(port -> port.port() == 4).findFirst().orElseThrow();
        assertThat(port4.peerModel()).isNull();
        assertThat(port4.otherDevices()).containsExactly("Envoy Ultra");
        assertThat(port4.interfaceName()).isEqualTo("en5");
    }

    @Test
    void everyMissingOutputIsNamed() {
        for (String command : MacosSamples.outputs().keySet()) {
            Map<String, String> outputs = new java.util.HashMap<>(MacosSamples.outputs());
            outputs.remove(command);
            java.util.Optional<String> optionalFact = FactsGatherer.OPTIONAL_FACTS.entrySet().stream()
                    .filter(entry -> entry.getValue().render().equals(command)).map(Map.Entry::getKey).findFirst();
            if (command.equals(FactsGatherer.RDMA_PORTS.render()) || command.equals(FactsGatherer.WIRED_LIMIT.render())) {
                // Observations stored before ibv_devinfo or the wired limit was gathered: not captured, not an error.
                assertThat(FactsGatherer.parse("studio-01", OBSERVED, outputs).unreadableFacts()).as(command).isEmpty();
            } else if (optionalFact.isPresent()) {
                // An optional fact costs only itself, named with the same reason.
                assertThat(FactsGatherer.parse("studio-01", OBSERVED, outputs).unreadableFacts()).as(command)
                        .containsExactly(Map.entry(optionalFact.get(), "`" + command + "`: no output recorded"));
            } else {
                assertThatThrownBy(() -> FactsGatherer.parse("studio-01", OBSERVED, outputs)).as(command)
                        .isInstanceOf(FactsGatheringException.class).hasMessage("studio-01: `" + command + "`: no output recorded");
            }
        }
    }

    @Test
    void brokenOutputNamesTheCommandAndThePlace() {
        Map<String, String> outputs = new java.util.HashMap<>(MacosSamples.outputs());
        outputs.put("uptime", "10:01  up soon, 2 users, load averages: 1 1 1\n");
        // uptime is optional: its reason is kept under its name and the other facts are read.
        MachineFacts withoutUptime = FactsGatherer.parse("studio-02", OBSERVED, outputs);
        assertThat(withoutUptime.unreadableFacts()).containsExactly(Map.entry("uptime",
                "`uptime`: uptime: cannot read 'soon' in the time since boot of '10:01  up soon, 2 users, load averages: 1 1 1'"));
        assertThat(withoutUptime.read(FactsGatherer.UPTIME_FACT)).isFalse();
        assertThat(withoutUptime.macosVersion()).isNotBlank();
        outputs.put("uptime", MacosSamples.read("uptime/macos-26.2-hours.txt"));
        // The wired limit is optional too: an unreadable one is unknown (model fit then assumes macOS's default), an
        // observation from before it was gathered has none and nothing unreadable.
        outputs.put("sysctl iogpu.wired_limit_mb", "sysctl: garbage\n");
        MachineFacts withoutLimit = FactsGatherer.parse("studio-02", OBSERVED, outputs);
        assertThat(withoutLimit.unreadableFacts()).containsOnlyKeys(FactsGatherer.WIRED_LIMIT_FACT);
        assertThat(new FactsObservation(withoutLimit, outputs).wiredLimitMegabytes()).isEmpty();
        outputs.remove("sysctl iogpu.wired_limit_mb");
        MachineFacts older = FactsGatherer.parse("studio-02", OBSERVED, outputs);
        assertThat(older.unreadableFacts()).isEmpty();
        assertThat(new FactsObservation(older, outputs).wiredLimitMegabytes()).isEmpty();
        outputs.put("system_profiler SPThunderboltDataType -json", "{\"SPThunderboltDataType\": 7}");
        assertThatThrownBy(() -> FactsGatherer.parse("studio-02", OBSERVED, outputs))
                .isInstanceOf(FactsGatheringException.class).hasMessageStartingWith("studio-02: `system_profiler SPThunderboltDataType -json`: ");
    }

    @Test
    void storedLatestAndHistoryInH2() {
        try (AgroalDataSource dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:facts-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null))) {
            FactsStoreContract.latestAndHistory(new FactsStore(dataSource));
        }
    }

    /** Shared with the PostgreSQL test of the same contract. */
    public static final class FactsStoreContract {
        private FactsStoreContract() {
        }

        public static void latestAndHistory(FactsStore store) {
            Map<String, String> outputs = MacosSamples.outputs();
            FactsObservation older = new FactsObservation(FactsGatherer.parse("studio-01", OBSERVED, outputs), outputs);
            FactsObservation newer = new FactsObservation(FactsGatherer.parse("studio-01", OBSERVED.plusSeconds(60), outputs), outputs);
            FactsObservation other = new FactsObservation(FactsGatherer.parse("studio-02", OBSERVED, outputs), outputs);
            assertThat(store.latest("studio-01")).isEmpty();
            assertThat(store.history("studio-01")).isEmpty();

            store.save(List.of(older, other));
            store.save(List.of(newer));

            assertThat(store.latest("studio-01")).contains(newer);
            assertThat(store.history("studio-01")).containsExactly(newer.facts(), older.facts());
            assertThat(store.latest(List.of("studio-02", "studio-03"))).containsOnlyKeys("studio-02");
            assertThat(store.latest("studio-02").orElseThrow().outputs()).isEqualTo(outputs);

            // Every machine's latest in one query (the console's overview), and the documents of chosen rows in another.
            Map<String, FactsStore.LatestRow> rows = store.latestRows();
            assertThat(rows).containsOnlyKeys("studio-01", "studio-02");
            assertThat(rows.get("studio-01").observedAt()).isEqualTo(OBSERVED.plusSeconds(60));
            assertThat(store.observations(List.of(rows.get("studio-01").id()))).containsExactly(Map.entry(rows.get("studio-01").id(), newer));
            assertThat(store.observations(List.of())).isEmpty();
            assertThat(store.latestOfAll()).containsExactly(Map.entry("studio-01", newer), Map.entry("studio-02", other));
            // Two observations at the same instant: the one stored last is the latest.
            FactsObservation again = new FactsObservation(FactsGatherer.parse("studio-02", OBSERVED, outputs), outputs);
            store.save(List.of(again));
            assertThat(store.latestRows().get("studio-02").id()).isGreaterThan(rows.get("studio-02").id());
        }
    }
}
