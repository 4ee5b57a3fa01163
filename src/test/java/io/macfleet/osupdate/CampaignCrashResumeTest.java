package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.inventory.Machine;
import io.macfleet.mdm.OsUpdateTarget;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine stopped abruptly at every step boundary of a campaign, one after another: each time a new engine (a new
 * lease owner, as a new process would be) resumes from the database alone, and the campaign still ends with every
 * node on the target, each declaration, set membership and assignment stored once on the server and each revision
 * fetched once per Mac. The start of one Mac is also cut off after the server got it and before the campaign recorded
 * it, so resuming calls start again and the server answers "unchanged".
 */
class CampaignCrashResumeTest {
    @TempDir
    Path directory;

    /** What a kill does to the engine: it stops where it is; nothing after runs, nothing catches it. */
    static final class Crash extends Error {
        Crash(String boundary) {
            super("stopped at " + boundary);
        }
    }

    @Test
    void aCampaignStoppedAtEveryBoundaryResumesToTheSameEndWithoutSendingTwice() throws Exception {
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.64")) {
            Set<String> crashed = ConcurrentHashMap.newKeySet();
            List<String> order = new ArrayList<>();
            StepBoundary crashAtEachNewBoundary = (campaign, boundary) -> {
                if (crashed.add(boundary)) {
                    order.add(boundary);
                    throw new Crash(boundary);
                }
            };
            Set<String> cutStarts = ConcurrentHashMap.newKeySet();
            MdmUpdateMethod mdm = fixture.mdm();
            UpdateMethod cutAfterSending = new UpdateMethod() {
                @Override
                public String name() {
                    return mdm.name();
                }

                @Override
                public PreflightResult preflight(Machine machine, OsUpdateTarget target) {
                    return mdm.preflight(machine, target);
                }

                @Override
                public StartResult start(Machine machine, OsUpdateTarget target) {
                    StartResult result = mdm.start(machine, target);
                    if (machine.name().equals("studio-02") && cutStarts.add(machine.name())) {
                        throw new Crash("inside start of studio-02, after the server got it");
                    }
                    return result;
                }

                @Override
                public UpdateProgress progress(Machine machine, OsUpdateTarget target) {
                    return mdm.progress(machine, target);
                }
            };
            CampaignFixture.MixedVersionWatch watch = fixture.new MixedVersionWatch();
            long id = -1;
            CampaignView end = null;
            for (int attempt = 0; attempt < 60 && end == null; attempt++) {
                // A new engine each time: nothing survives but the database (lease timeout 0: the dead owner's lease is stale).
                OsUpdateCampaigns engine = new OsUpdateCampaigns(fixture.dataSource, fixture.desiredState, fixture.facts, fixture.cabling,
                        List.of(cutAfterSending), new OsUpdateCampaigns.Options(fixture.ssh, Duration.ofMillis(40), fixture.deadlines, Duration.ZERO),
                        crashAtEachNewBoundary);
                try {
                    CampaignView view = attempt == 0 ? engine.apply(CampaignFixture.to262(true), "alice")
                            : engine.apply(CampaignFixture.to262(true), "alice");
                    end = view;
                } catch (Crash crash) {
                    if (id < 0) {
                        id = engine.campaigns(1).getFirst().id();
                    }
                }
            }
            watch.close();
            assertThat(end).as("the campaign ended within 60 restarts; crashed at " + order).isNotNull();
            assertThat(end.id()).isEqualTo(id);
            assertThat(end.status()).as(end.toString()).isEqualTo("succeeded");
            assertThat(order).contains("created", "preflight llm-a", "draining llm-a", "maintenance llm-a", "stopping studio-01", "updating llm-a",
                    "sending studio-01", "sent studio-04", "verifying llm-a", "undraining llm-a", "done llm-a");
            assertThat(cutStarts).containsExactly("studio-02");

            assertThat(fixture.releases()).containsOnly("26.2 25C56");
            assertThat(fixture.machines).allMatch(fixture::serving);
            assertThat(watch.violations).isEmpty();
            assertThat(fixture.hub.declarationChanges()).hasSize(4);
            assertThat(fixture.hub.setChanges()).hasSize(4);
            assertThat(fixture.hub.assignmentChanges()).hasSize(4);
            assertThat(fixture.hub.commands()).isEmpty();
            for (String machine : fixture.machines) {
                assertThat(fixture.hub.deliveries(fixture.enrollment(machine))).doesNotHaveDuplicates().hasSize(4);
            }
            // One campaign only: every restart continued it.
            assertThat(new OsUpdateCampaigns(fixture.dataSource, fixture.desiredState, fixture.facts, fixture.cabling, List.of(mdm),
                    new OsUpdateCampaigns.Options(fixture.ssh, Duration.ofMillis(40), fixture.deadlines, Duration.ZERO)).campaigns(10)).hasSize(1);
            assertThat(fixture.auditCount("os-update.send", "campaign " + id + ": declaration % (changed)")).isEqualTo(4);
        }
    }

    @Test
    void aCampaignHeldByALiveProcessIsNotTakenOver() throws Exception {
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.65")) {
            long id = fixture.campaigns().create(CampaignFixture.to262(true), "alice");
            // Take the lease as a live process of this host would, then a second engine must refuse.
            CampaignStore store = new CampaignStore(fixture.dataSource);
            String live = ProcessHandle.current().pid() + "@" + java.net.InetAddress.getLocalHost().getHostName() + "/abcdef01";
            assertThat(store.acquireLease(id, live, java.time.Instant.now(), java.time.Instant.now().minus(Duration.ofMinutes(5)), null)).isTrue();
            assertThatThrownBy(() -> fixture.campaigns().run(id, "bob")).isInstanceOf(OsUpdateCampaigns.CampaignConflictException.class)
                    .hasMessageContaining("is being worked on by " + live);
        }
    }
}
