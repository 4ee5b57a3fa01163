package io.macfleet.ssh;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FleetRunTest {

    private final List<TestSshServer> servers = new ArrayList<>();

    @AfterEach
    void stopServers() throws IOException {
        for (TestSshServer server : servers) {
            server.close();
        }
    }

    @Test
    void fiftyMachinesInParallelWithBoundedConcurrencyAndOneConnectionEach() throws IOException {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        List<SshTarget> targets = new ArrayList<>();
        for (int index = 1; index <= 50; index++) {
            String name = "studio-%02d".formatted(index);
            TestSshServer server = TestSshServer.start(exec -> {
                mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    Thread.sleep(20);
                    exec.print(exec.commandLine().equals("hostname") ? name : "26.2");
                    return 0;
                } finally {
                    running.decrementAndGet();
                }
            });
            servers.add(server);
            // Machine 13 is wrong about its host key: its failure must not hide anyone else's result.
            SshTarget target = server.target(name);
            targets.add(index == 13 ? target.withPinnedHostKey("SHA256:" + "A".repeat(43)) : target);
        }
        InMemoryAuditLog audit = new InMemoryAuditLog();
        SshTransport transport = new SshTransport(SshSettings.defaults("cli:test").withAcceptNewHostKeys(true)
                .withParallelism(8), new InMemoryHostKeyStore(), audit);

        List<MachineResult<String>> results = transport.onFleet(targets, machine ->
                machine.execute(Command.reading("hostname")).requireSuccess().stdout()
                        + " " + machine.execute(Command.reading("sw_vers", "-productVersion")).requireSuccess().stdout());

        assertThat(results).hasSize(50);
        for (int index = 0; index < 50; index++) {
            MachineResult<String> result = results.get(index);
            assertThat(result.machine()).isEqualTo(targets.get(index).machine());
            if (index == 12) {
                assertThat(result.error()).isInstanceOf(SshException.HostKeyChanged.class)
                        .hasMessageStartingWith("studio-13 (");
            } else {
                assertThat(result.succeeded()).as(result.describe()).isTrue();
                assertThat(result.value()).isEqualTo(result.machine() + " 26.2");
                // Both commands of the run went over one connection.
                assertThat(servers.get(index).connections()).isEqualTo(1);
                assertThat(servers.get(index).received()).containsExactly("hostname", "sw_vers -productVersion");
            }
        }
        assertThat(mostAtOnce.get()).isBetween(2, 8);
        assertThat(audit.events("ssh.exec")).hasSize(49 * 2 + 1);
    }

    @Test
    void aMachineListedTwiceIsAnInputError() throws IOException {
        TestSshServer server = TestSshServer.start(TestSshServer.answer("", 0));
        servers.add(server);
        SshTransport transport = new SshTransport(SshSettings.defaults("cli:test"), new InMemoryHostKeyStore(),
                new InMemoryAuditLog());
        assertThatThrownBy(() -> transport.onFleet(List.of(server.target("studio-01"), server.target("studio-01")),
                machine -> "x")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("studio-01 is listed twice");
    }

    @Test
    void anOperationThatThrowsOnOneMachineLeavesTheOthersAlone() throws IOException {
        TestSshServer first = TestSshServer.start(TestSshServer.answer("garbage", 0));
        TestSshServer second = TestSshServer.start(TestSshServer.answer("26.2", 0));
        servers.add(first);
        servers.add(second);
        SshTransport transport = new SshTransport(SshSettings.defaults("cli:test").withAcceptNewHostKeys(true)
                .withLimits(ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofSeconds(5))),
                new InMemoryHostKeyStore(), new InMemoryAuditLog());
        List<MachineResult<Integer>> results = transport.onFleet(List.of(first.target("a"), second.target("b")),
                machine -> Integer.parseInt(machine.execute(Command.reading("sw_vers")).stdout().split("\\.")[0]));
        assertThat(results.get(0).error()).isInstanceOf(NumberFormatException.class);
        assertThat(results.get(1).value()).isEqualTo(26);
    }
}
