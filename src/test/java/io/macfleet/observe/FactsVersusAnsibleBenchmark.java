package io.macfleet.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.facts.FactsGatherer;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.Machine;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Issue 13, speed against the tool our users would otherwise use: the same simulated Macs gathered by macfleet (a
 * fresh run with new connections, as one `macfleet facts` call does; and a round of the service's observation loop,
 * whose connections stay open) and by {@code ansible-playbook} (gather_facts false, one {@code raw} task per command
 * macfleet runs, ControlPersist on, forks = macfleet's parallelism). Run through bench/facts-vs-ansible.sh, or:
 * {@code ./mvnw -f control-plane.xml test -Dtest=FactsVersusAnsibleBenchmark -Dmacfleet.benchmarks=true -Dbenchmark.macs=20,200}
 */
@EnabledIfSystemProperty(named = "macfleet.benchmarks", matches = "true")
class FactsVersusAnsibleBenchmark {

    private static final int PARALLELISM = Integer.getInteger("benchmark.parallel", 16);
    private static final int ROUNDS = Integer.getInteger("benchmark.rounds", 3);
    /** The longest one ansible-playbook run may take before it is stopped (-Dbenchmark.ansible-limit=SECONDS). */
    private static final Duration ANSIBLE_LIMIT = Duration.ofSeconds(Integer.getInteger("benchmark.ansible-limit", 300));

    @Test
    void macfleetAgainstAnsible() throws Exception {
        // -Dbenchmark.ansible=none measures macfleet alone (Ansible at 200 Macs takes long on a busy machine).
        String configured = System.getProperty("benchmark.ansible", "/usr/bin/ansible-playbook");
        Path ansible = configured.equals("none") ? null : Path.of(configured);
        if (ansible != null) {
            assertThat(ansible).as("ansible-playbook (apt-get install ansible-core)").isExecutable();
        }
        for (String count : System.getProperty("benchmark.macs", "20,200").split(",")) {
            measure(Integer.parseInt(count.strip()), ansible);
        }
    }

    private void measure(int macs, Path ansible) throws Exception {
        Path directory = Files.createTempDirectory("macfleet-vs-ansible");
        try (SimulatedInventory simulation = SimulatedInventory.start(directory, macs, "127.0.2.1")) {
            simulation.apply(List.of(), Map.of());
            FactsService facts = simulation.facts;
            List<Machine> machines = facts.select(null, List.of());
            SshSettings settings = SimulatedInventory.settings(Duration.ofSeconds(30)).withParallelism(PARALLELISM);
            Path playbook = writeAnsible(directory, simulation);

            // macfleet first, so its figures stand even when Ansible runs out of time on a busy machine.
            // Warm-up: JIT and class loading.
            assertThat(facts.gather(machines, settings).failed()).isZero();
            List<Long> cli = new ArrayList<>();
            List<Long> loop = new ArrayList<>();
            try (SshRun kept = facts.openRun(settings, ObservationLoop.failuresOnly(facts.auditLog()))) {
                assertThat(facts.gather(machines, kept, "benchmark").failed()).isZero();
                for (int round = 0; round < ROUNDS; round++) {
                    long start = System.nanoTime();
                    assertThat(facts.gather(machines, settings).failed()).isZero();
                    cli.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));

                    start = System.nanoTime();
                    assertThat(facts.gather(machines, kept, "benchmark").failed()).isZero();
                    loop.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                }
            }
            System.out.printf(Locale.ROOT, "%d Macs, %d in parallel, %d commands each, %d rounds; load %s%n", macs, PARALLELISM,
                    FactsGatherer.COMMANDS.size(), ROUNDS, Files.readString(Path.of("/proc/loadavg")).strip());
            System.out.printf(Locale.ROOT, "  macfleet, new connections (a CLI call's gathering): median %6d ms %s%n", median(cli), cli);
            System.out.printf(Locale.ROOT, "  macfleet, observation loop round (connections kept): median %6d ms %s%n", median(loop), loop);
            if (ansible == null) {
                System.out.printf(Locale.ROOT, "  ansible-playbook: not run (-Dbenchmark.ansible=none)%n");
                return;
            }

            // Warm-up: Python's byte code and the ControlPersist sockets. A run past the limit is stopped and reported
            // as "over the limit": the macfleet figures above are printed whatever Ansible does.
            List<Long> ansibleTimes = new ArrayList<>();
            Long warmUp = runAnsible(ansible, directory, playbook);
            for (int round = 0; warmUp != null && round < ROUNDS; round++) {
                Long elapsed = runAnsible(ansible, directory, playbook);
                if (elapsed == null) {
                    break;
                }
                ansibleTimes.add(elapsed);
            }
            if (ansibleTimes.size() < ROUNDS) {
                System.out.printf(Locale.ROOT, "  ansible-playbook (raw, ControlPersist): a run did not finish within %d s (%s; %d of %d timed rounds done %s),"
                        + " stopped; so macfleet CLI gathering < %.2f of Ansible, observation loop round < %.2f of Ansible%n",
                        ANSIBLE_LIMIT.toSeconds(), warmUp == null ? "in the warm-up run" : "in a timed run", ansibleTimes.size(), ROUNDS, ansibleTimes,
                        median(cli) / (double) ANSIBLE_LIMIT.toMillis(), median(loop) / (double) ANSIBLE_LIMIT.toMillis());
                return;
            }
            long ansibleMedian = median(ansibleTimes);
            System.out.printf(Locale.ROOT, "  ansible-playbook (raw, ControlPersist): median %6d ms %s%n", ansibleMedian, ansibleTimes);
            System.out.printf(Locale.ROOT, "  macfleet CLI gathering = %.2f of Ansible; observation loop round = %.2f of Ansible%n",
                    median(cli) / (double) ansibleMedian, median(loop) / (double) ansibleMedian);
        }
    }

    /** An inventory of the simulated Macs and a playbook of one raw task per command macfleet's gathering runs. */
    private static Path writeAnsible(Path directory, SimulatedInventory simulation) throws Exception {
        SimulatedFleet fleet = simulation.fleet;
        StringBuilder hosts = new StringBuilder("[macs]\n");
        for (SimulatedMac mac : fleet.machines()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
            hosts.append(mac.name()).append(" ansible_host=").append(endpoint.host()).append(" ansible_port=").append(endpoint.port())
                    .append(" ansible_user=").append(fleet.sshUser()).append(" ansible_ssh_private_key_file=").append(simulation.privateKey()).append('\n');
        }
        Files.writeString(directory.resolve("hosts.ini"), hosts);
        Files.writeString(directory.resolve("ansible.cfg"), """
                [defaults]
                host_key_checking = False
                forks = %d
                gathering = explicit
                stdout_callback = default
                interpreter_python = auto_silent
                [ssh_connection]
                ssh_args = -o ControlMaster=auto -o ControlPersist=600s -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no
                control_path_dir = %s
                pipelining = True
                """.formatted(PARALLELISM, directory.resolve("cp")));
        StringBuilder playbook = new StringBuilder("- hosts: macs\n  gather_facts: false\n  tasks:\n");
        for (var command : FactsGatherer.COMMANDS) {
            playbook.append("    - raw: \"").append(command.render()).append("\"\n      changed_when: false\n");
        }
        Path file = directory.resolve("facts.yml");
        Files.writeString(file, playbook);
        return file;
    }

    /** One ansible-playbook run's wall time in milliseconds, or null when it was stopped at the limit. */
    private static Long runAnsible(Path ansible, Path directory, Path playbook) throws Exception {
        long start = System.nanoTime();
        Process process = new ProcessBuilder(ansible.toString(), "-i", directory.resolve("hosts.ini").toString(), playbook.toString())
                .directory(directory.toFile()).redirectErrorStream(true)
                .redirectOutput(directory.resolve("ansible.log").toFile()).start();
        process.getOutputStream().close();
        if (!process.waitFor(ANSIBLE_LIMIT.toMillis(), TimeUnit.MILLISECONDS)) {
            // Its forks and their ssh processes first, then ansible-playbook itself (the ControlPersist masters go too).
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
            return null;
        }
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(process.exitValue()).as(Files.readString(directory.resolve("ansible.log"))).isZero();
        return elapsed;
    }

    private static long median(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }
}
