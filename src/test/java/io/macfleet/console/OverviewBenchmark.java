package io.macfleet.console;

import io.macfleet.fleet.FleetStatus;
import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.cabling.PlannedTopology;
import io.macfleet.cabling.PortPlan;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.Topology;
import io.macfleet.simulator.Cable;
import io.macfleet.simulator.LinkSpeed;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The fleet overview with 200 simulated Mac Studios (50 full-mesh clusters of 4, facts gathered over real SSH, a few
 * faults so that some machines have problems): time to render the page, in process (read the database, compute every
 * status and cabling check, render the template) and over HTTP on loopback. Run with:
 * {@code ./mvnw -B -f control-plane.xml verify -Dtest=OverviewBenchmark -Dmacfleet.benchmarks=true [-Dmacfleet.benchmark.renders=200]}
 */
@QuarkusTest
@EnabledIfSystemProperty(named = "macfleet.benchmarks", matches = "true")
class OverviewBenchmark {

    private static final int FLEET = 200;
    private static final int CLUSTER_SIZE = 4;

    @TestHTTPResource("/console")
    URL overview;

    @Inject
    DesiredStateStore store;

    @Inject
    FactsService facts;

    @Inject
    OverviewResource console;

    @Inject
    FleetStatus fleetStatus;

    @Inject
    javax.sql.DataSource dataSource;

    @Inject
    io.macfleet.provision.ProvisioningService provisioning;

    /** In process, outside an HTTP request: the console's request-scoped beans need a request context of their own. */
    private String render() {
        var context = io.quarkus.arc.Arc.container().requestContext();
        context.activate();
        try {
            return (String) console.overview(null, null).getEntity();
        } finally {
            context.terminate();
        }
    }

    @Test
    void renderTheOverviewOf200Machines() throws Exception {
        int renders = Integer.getInteger("macfleet.benchmark.renders", 200);
        try (SimulatedInventory simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-overview-benchmark"), FLEET, "127.0.5.1")) {
            List<String> all = IntStream.rangeClosed(1, FLEET).mapToObj(index -> SimulatedInventory.name(index, FLEET)).toList();
            List<SimulatedInventory.ClusterSpec> clusters = new ArrayList<>();
            for (Cable cable : simulation.fleet.cabling().all()) {
                simulation.fleet.cabling().unplug(cable.a());
            }
            for (int first = 0; first < FLEET; first += CLUSTER_SIZE) {
                List<String> members = all.subList(first, first + CLUSTER_SIZE);
                String name = String.format(Locale.ROOT, "llm-%02d", first / CLUSTER_SIZE + 1);
                clusters.add(SimulatedInventory.ClusterSpec.fullMesh(name, members));
                for (Topology.Link link : PortPlan.fullMesh(name, members).cables()) {
                    simulation.fleet.cabling().plug(link.first().toString(), link.second().toString(), LinkSpeed.TB5);
                }
            }
            // Some trouble, as a real fleet has: a missing cable, RDMA off, memory drift.
            simulation.fleet.cabling().unplug(new io.macfleet.simulator.PortRef(all.get(28), 2));
            simulation.fleet.machine(all.get(41)).setRdmaEnabled(false);
            simulation.fleet.machine(all.get(97)).setRdmaEnabled(false);
            Map<String, Integer> memory = new HashMap<>(Map.of(all.get(150), 128, all.get(151), 128));
            Path inventory = simulation.writeInventory(clusters, memory);
            store.apply(InventoryLoader.load(inventory).inventory(), "overview-benchmark", inventory.toString());
            FactsService.Gathering gathering = facts.gather(facts.select(null, List.of()),
                    SimulatedInventory.settings(Duration.ofSeconds(60)).withParallelism(32));
            assertThat(gathering.failed()).isZero();
            System.out.printf(Locale.ROOT, "gathered facts of %d simulated Macs in %d ms%n", FLEET, gathering.elapsed().toMillis());
            // A provisioning run over the whole fleet, as after a bring-up: every machine has a provisioning state to show
            // (198 with RDMA already on, two waiting for someone in Recovery).
            long runStart = System.nanoTime();
            long run = provisioning.startInBackground(new io.macfleet.provision.ProvisioningService.Request(null, all, "rdma-enable", null, null,
                    true, null), "overview-benchmark");
            while (!provisioning.run(run).orElseThrow().run().status().equals("waiting-for-operator")) {
                Thread.sleep(50);
            }
            System.out.printf(Locale.ROOT, "rdma-enable over %d simulated Macs (2 to wait for a person) in %d ms%n", FLEET,
                    (System.nanoTime() - runStart) / 1_000_000);

            long start = System.nanoTime();
            String firstPage = render();
            long cold = System.nanoTime() - start;
            assertThat(firstPage).contains("<strong>200</strong> machines").contains("data-machine=\"" + all.get(28) + "\"")
                    .contains("waiting for a person: rdma-enabled");

            List<Long> inProcess = new ArrayList<>();
            for (int round = 0; round < renders; round++) {
                long begin = System.nanoTime();
                String page = render();
                inProcess.add(System.nanoTime() - begin);
                assertThat(page.length()).isGreaterThan(100_000);
            }
            // Every machine with new facts since the last view (after a fleet-wide gathering): every document read and parsed again.
            List<Long> uncached = new ArrayList<>();
            for (int round = 0; round < 20; round++) {
                fleetStatus.forgetCaches();
                long begin = System.nanoTime();
                render();
                uncached.add(System.nanoTime() - begin);
            }
            // Where the uncached time goes: reading and parsing the documents, then the Thunderbolt output for the cabling check.
            io.macfleet.facts.FactsStore store = new io.macfleet.facts.FactsStore(dataSource);
            List<Long> reading = new ArrayList<>();
            List<Long> parsingThunderbolt = new ArrayList<>();
            long documentBytes = 0;
            for (int round = 0; round < 10; round++) {
                long begin = System.nanoTime();
                Map<String, io.macfleet.facts.FactsObservation> latest = store.latestOfAll();
                reading.add(System.nanoTime() - begin);
                begin = System.nanoTime();
                latest.values().forEach(observation -> io.macfleet.cabling.ClusterCabling.cablingFacts(observation, "127.0.0.1"));
                parsingThunderbolt.add(System.nanoTime() - begin);
                documentBytes = latest.values().stream().mapToLong(observation -> observation.outputs().values().stream().mapToLong(String::length).sum()).sum();
            }
            HttpClient client = HttpClient.newHttpClient();
            String authorization = "Bearer " + io.macfleet.accounts.TestAccounts.token(io.macfleet.accounts.Role.VIEWER);
            HttpRequest request = HttpRequest.newBuilder(URI.create(overview.toString())).header("Authorization", authorization).GET().build();
            List<Long> overHttp = new ArrayList<>();
            int bytes = 0;
            for (int round = 0; round < renders; round++) {
                long begin = System.nanoTime();
                HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
                overHttp.add(System.nanoTime() - begin);
                assertThat(response.statusCode()).isEqualTo(200);
                bytes = response.body().length();
            }
            List<Long> fragment = new ArrayList<>();
            HttpRequest table = HttpRequest.newBuilder(URI.create(overview.toString().replace("/console", "/console/fleet-table")))
                    .header("Authorization", authorization).GET().build();
            for (int round = 0; round < renders; round++) {
                long begin = System.nanoTime();
                assertThat(client.send(table, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
                fragment.add(System.nanoTime() - begin);
            }
            System.out.printf(Locale.ROOT, "overview of %d machines in %d clusters, %d renders each (page %d kB):%n", FLEET, clusters.size(), renders, bytes / 1024);
            System.out.printf(Locale.ROOT, "  first render in process (cold caches): %.1f ms%n", cold / 1e6);
            System.out.printf(Locale.ROOT, "  in process (database, statuses, cabling checks, template): %s%n", summary(inProcess));
            System.out.printf(Locale.ROOT, "  in process, every machine with new facts (no cached parse, 20 renders): %s%n", summary(uncached));
            System.out.printf(Locale.ROOT, "    of which reading the latest facts of %d machines (%d kB of command output) in 2 queries: %s%n", FLEET,
                    documentBytes / 1024, summary(reading));
            System.out.printf(Locale.ROOT, "    and parsing their Thunderbolt output for the cabling checks: %s%n", summary(parsingThunderbolt));
            System.out.printf(Locale.ROOT, "  GET /console over HTTP on loopback: %s%n", summary(overHttp));
            System.out.printf(Locale.ROOT, "  GET /console/fleet-table (the 5 s live refresh) over HTTP: %s%n", summary(fragment));
        }
    }

    private static String summary(List<Long> nanos) {
        List<Long> sorted = nanos.stream().sorted().toList();
        return String.format(Locale.ROOT, "median %.1f ms, p95 %.1f ms, max %.1f ms", sorted.get(sorted.size() / 2) / 1e6,
                sorted.get((int) Math.ceil(sorted.size() * 0.95) - 1) / 1e6, sorted.getLast() / 1e6);
    }
}
