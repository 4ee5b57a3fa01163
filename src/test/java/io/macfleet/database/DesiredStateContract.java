package io.macfleet.database;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditQuery;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.Inventory;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.Machine;
import io.macfleet.inventory.MdmServer;
import io.macfleet.inventory.Plan;
import io.macfleet.inventory.VolumeOwner;
import io.macfleet.secrets.SecretReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same migrations and the same plan/apply/audit behaviour on every supported database: each subclass
 * supplies a freshly migrated, empty database.
 */
abstract class DesiredStateContract {

    @TempDir
    Path directory;

    abstract DataSource dataSource();

    private Inventory example() throws Exception {
        ExampleInventory.writeTo(directory, true);
        LoadResult result = InventoryLoader.load(directory);
        assertThat(result.errors()).isEmpty();
        return result.inventory();
    }

    @Test
    void planApplyPlanAgainIsEmptyAndChangesAreFieldLevel() throws Exception {
        DesiredStateStore store = new DesiredStateStore(dataSource());
        Inventory inventory = example();

        Plan first = store.plan(inventory);
        assertThat(first.count(Plan.Action.ADD)).isEqualTo(5);
        assertThat(store.machines(null)).as("plan changes nothing").isEmpty();

        assertThat(store.apply(inventory, "alice", "test")).isEqualTo(first);
        assertThat(store.plan(inventory).isEmpty()).isTrue();
        assertThat(store.machines("llm-a")).extracting(Machine::name)
                .containsExactly("studio-01", "studio-02", "studio-03", "studio-04");
        assertThat(store.cluster("llm-a")).isPresent();
        assertThat(store.inventory().machinesOf("llm-a")).extracting(Machine::name).isEqualTo(List.of("studio-01", "studio-02", "studio-03", "studio-04"));

        Files.writeString(directory.resolve("machines.yaml"), Files.readString(directory.resolve("machines.yaml"))
                .replace("groups: [studio-256]", "groups: [studio-512]")
                .replace("  - name: studio-02\n    address: 192.168.50.12", "  - name: studio-05\n    address: 192.168.50.15"));
        String clusters = Files.readString(directory.resolve("clusters.yaml"));
        Files.writeString(directory.resolve("clusters.yaml"), clusters.substring(0, clusters.indexOf("      links:"))
                + clusters.substring(clusters.indexOf("    inference:")));
        LoadResult changedResult = InventoryLoader.load(directory);
        assertThat(changedResult.errors()).isEmpty();
        Inventory changed = changedResult.inventory();
        Plan second = store.plan(changed);
        assertThat(second.changes()).extracting(change -> change.action() + " " + change.name()).containsExactly(
                "CHANGE llm-a", "REMOVE studio-02", "CHANGE studio-03", "CHANGE studio-04", "ADD studio-05");
        assertThat(second.changes().getFirst().fields()).extracting(Plan.FieldChange::field, Plan.FieldChange::after)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("topology.links", null));
        assertThat(second.changes().get(2).fields()).containsExactly(
                new Plan.FieldChange("groups", "[studio-256]", "[studio-512]"),
                new Plan.FieldChange("labels.memory", "256", "512"),
                new Plan.FieldChange("memoryGb", "256", "512"));
        store.apply(changed, "bob", "test");
        assertThat(store.plan(changed).isEmpty()).isTrue();

        JdbcAuditLog audit = new JdbcAuditLog(dataSource());
        assertThat(audit.find(new AuditQuery(null, "inventory.apply", null, null, 10)))
                .extracting(entry -> entry.event().actor()).containsExactly("bob", "alice");
        assertThat(audit.find(new AuditQuery("studio-03", null, null, null, 10)))
                .extracting(entry -> entry.event().action() + " " + entry.event().detail()).containsExactly(
                        "inventory.machine.change machine studio-03: groups [studio-256] -> [studio-512]; labels.memory 256 -> 512; memoryGb 256 -> 512",
                        "inventory.machine.add machine studio-03");
    }

    @Test
    void theAppliedStateComesBackAsTheRecordsTheLoaderMadeWithTheMdmServer() throws Exception {
        DesiredStateStore store = new DesiredStateStore(dataSource());
        Inventory example = example();
        List<Machine> machines = new ArrayList<>(example.machines());
        Machine first = machines.getFirst();
        machines.set(0, new Machine(first.name(), first.address(), first.ssh(), first.serialNumber(), first.model(), first.memoryGb(),
                first.role(), first.cluster(), first.groups(), "ENROLL-0001",
                new VolumeOwner("owner", SecretReference.parse("env:OWNER_PASSWORD").orElseThrow()), first.labels()));
        Inventory inventory = new Inventory(example.clusters(), machines,
                new MdmServer("https://mdm.example.com", SecretReference.parse("env:MDM_API_TOKEN").orElseThrow()));

        Plan applied = store.apply(inventory, "alice", "test");
        assertThat(applied.changes()).extracting(change -> change.kind() + " " + change.action() + " " + change.name()).contains("MDM ADD server");

        Inventory stored = store.inventory();
        assertThat(stored.mdm()).isEqualTo(inventory.mdm());
        assertThat(stored.clusters()).containsExactlyInAnyOrderElementsOf(inventory.clusters());
        assertThat(stored.machines()).containsExactlyInAnyOrderElementsOf(inventory.machines());
        assertThat(stored.cluster("llm-a").orElseThrow().topology().links()).as("links come back parsed")
                .isEqualTo(example.cluster("llm-a").orElseThrow().topology().links()).isNotEmpty();
        assertThat(store.machine(first.name()).orElseThrow().mdmEnrollmentId()).isEqualTo("ENROLL-0001");
        assertThat(store.plan(inventory).isEmpty()).isTrue();

        Plan removed = store.apply(new Inventory(inventory.clusters(), inventory.machines(), null), "alice", "test");
        assertThat(removed.changes()).extracting(change -> change.kind() + " " + change.action() + " " + change.name())
                .containsExactly("MDM REMOVE server");
        assertThat(store.mdm()).isEmpty();
    }

    @Test
    void aFailedApplyChangesNothing() throws Exception {
        DesiredStateStore store = new DesiredStateStore(dataSource());
        Inventory inventory = example();
        List<Machine> machines = new ArrayList<>(inventory.machines());
        Machine last = machines.removeLast();
        // A name longer than the column: the database rejects it after the cluster and three machines were written.
        machines.add(new Machine("x".repeat(150), last.address(), last.ssh(), last.serialNumber(), last.model(), last.memoryGb(),
                last.role(), last.cluster(), last.groups(), last.mdmEnrollmentId(), last.volumeOwner(), last.labels()));
        Inventory broken = new Inventory(inventory.clusters(), machines, null);
        long auditBefore = new JdbcAuditLog(dataSource()).find(AuditQuery.all()).size();

        assertThatThrownBy(() -> store.apply(broken, "alice", "test")).isInstanceOf(DatabaseException.class);

        assertThat(store.clusters()).isEmpty();
        assertThat(store.machines(null)).isEmpty();
        assertThat(new JdbcAuditLog(dataSource()).find(AuditQuery.all())).hasSize((int) auditBefore);
        assertThat(store.plan(inventory).count(Plan.Action.ADD)).isEqualTo(5);
    }

    @Test
    void theAuditLogFiltersByActionPrefixAndLeavesOutNoise() {
        JdbcAuditLog audit = new JdbcAuditLog(dataSource());
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        audit.record(new AuditEvent(start, "alice", "studio-01", "ssh.exec", "uname -a", AuditEvent.Outcome.SUCCESS));
        audit.record(new AuditEvent(start.plusSeconds(1), "alice", "studio-01", "inventory.machine.add", "", AuditEvent.Outcome.SUCCESS));
        audit.record(new AuditEvent(start.plusSeconds(2), "alice", null, "inventory.apply", "", AuditEvent.Outcome.SUCCESS));
        audit.record(new AuditEvent(start.plusSeconds(3), "demo", "studio-01", "demo.fault", "hang", AuditEvent.Outcome.SUCCESS));
        audit.record(new AuditEvent(start.plusSeconds(4), "alice", null, "inventoryX", "not under inventory.", AuditEvent.Outcome.SUCCESS));

        assertThat(audit.find(new AuditQuery(null, "inventory.*", null, null, 100, List.of()))).extracting(entry -> entry.event().action())
                .containsExactly("inventory.apply", "inventory.machine.add");
        assertThat(audit.find(new AuditQuery(null, null, null, null, 100, List.of("ssh.exec", "demo.*")))).extracting(entry -> entry.event().action())
                .containsExactly("inventoryX", "inventory.apply", "inventory.machine.add");
        assertThat(audit.find(new AuditQuery("studio-01", "inventory.*", null, null, 100, List.of("inventory.apply")))).hasSize(1);
        assertThatThrownBy(() -> new AuditQuery(null, "inv*ntory", null, null, 100, List.of()))
                .hasMessage("action 'inv*ntory': a * may only end the name, as in inventory.*");
    }

    @Test
    void theAuditLogFiltersAndKeepsNewestFirst() {
        JdbcAuditLog audit = new JdbcAuditLog(dataSource());
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        audit.record(new AuditEvent(start, "alice", "studio-01", "ssh.exec", "uname -a", AuditEvent.Outcome.SUCCESS));
        audit.record(new AuditEvent(start.plusSeconds(60), "bob", "studio-02", "ssh.exec", "reboot", AuditEvent.Outcome.FAILURE));
        audit.record(new AuditEvent(start.plusSeconds(120), "alice", null, "inventory.apply", "", AuditEvent.Outcome.SUCCESS));

        assertThat(audit.find(AuditQuery.all())).extracting(entry -> entry.event().detail()).containsExactly("", "reboot", "uname -a");
        assertThat(audit.find(new AuditQuery(null, null, "alice", null, 100))).hasSize(2);
        assertThat(audit.find(new AuditQuery("studio-02", "ssh.exec", null, null, 100)))
                .singleElement().satisfies(entry -> {
                    assertThat(entry.event().outcome()).isEqualTo(AuditEvent.Outcome.FAILURE);
                    assertThat(entry.event().at()).isEqualTo(start.plusSeconds(60));
                });
        assertThat(audit.find(new AuditQuery(null, null, null, start.plusSeconds(60), 100))).hasSize(2);
        assertThat(audit.find(new AuditQuery(null, null, null, null, 1))).extracting(entry -> entry.event().action())
                .containsExactly("inventory.apply");
        assertThatThrownBy(() -> new AuditQuery(null, null, null, null, 0)).hasMessageContaining("expected 1 to 10000");
    }

    @Test
    void theAuditLogSearchesTextAndTimeRangesAndPages() {
        JdbcAuditLog audit = new JdbcAuditLog(dataSource());
        Instant start = Instant.parse("2026-02-01T00:00:00Z");
        for (int index = 0; index < 25; index++) {
            audit.record(new AuditEvent(start.plusSeconds(index * 60L), index % 2 == 0 ? "alice" : "bob", "studio-" + (index % 3),
                    "ssh.exec", "command " + index + (index == 7 ? " 100%_done" : ""), AuditEvent.Outcome.SUCCESS));
        }

        assertThat(audit.find(new AuditQuery(null, null, null, null, null, "COMMAND 1", 0, 100)))
                .extracting(entry -> entry.event().detail())
                .containsExactly("command 19", "command 18", "command 17", "command 16", "command 15", "command 14", "command 13",
                        "command 12", "command 11", "command 10", "command 1");
        // % and _ are matched as themselves, not as wildcards.
        assertThat(audit.find(new AuditQuery(null, null, null, null, null, "0%_d", 0, 100)))
                .extracting(entry -> entry.event().detail()).containsExactly("command 7 100%_done");
        assertThat(audit.find(new AuditQuery(null, null, null, null, null, "0%xd", 0, 100))).isEmpty();
        // The text matches actors and machines too.
        assertThat(audit.count(new AuditQuery(null, null, null, null, null, "BOB", 0, 100))).isEqualTo(12);
        assertThat(audit.count(new AuditQuery(null, null, null, null, null, "studio-2", 0, 100))).isEqualTo(8);

        AuditQuery range = new AuditQuery(null, null, "alice", start.plusSeconds(120), start.plusSeconds(600), null, 0, 100);
        assertThat(audit.find(range)).extracting(entry -> entry.event().detail())
                .containsExactly("command 8", "command 6", "command 4", "command 2");

        AuditQuery secondPage = new AuditQuery(null, "ssh.exec", null, null, null, null, 10, 10);
        assertThat(audit.find(secondPage)).extracting(entry -> entry.event().detail()).first().isEqualTo("command 14");
        assertThat(audit.find(secondPage)).hasSize(10).last().extracting(entry -> entry.event().detail()).isEqualTo("command 5");
        assertThat(audit.find(new AuditQuery(null, "ssh.exec", null, null, null, null, 20, 10))).hasSize(5);
        assertThat(audit.count(secondPage)).isEqualTo(25);

        assertThatThrownBy(() -> new AuditQuery(null, null, null, start.plusSeconds(60), start, null, 0, 10))
                .hasMessageContaining("ends").hasMessageContaining("before it starts");
        assertThatThrownBy(() -> new AuditQuery(null, null, null, null, null, null, -1, 10)).hasMessageContaining("offset -1");
    }
}
