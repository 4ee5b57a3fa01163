package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.deployment.RemoteShell;
import io.macfleet.ssh.Command;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.junit.jupiter.api.Test;

/**
 * The coordinated reboot's wait for a new boot against a fake Mac: after {@code shutdown -r now} the old system may go on
 * answering for a while, so the node is started again only once the machine was seen unreachable, its uptime went below
 * the one read at the order, or its uptime could not be read (then the RDMA verification decides).
 */
class ShellNodeControlTest {

    private static final String LABEL = "io.macfleet.inference-node";
    private static final RemoteShell.Answer THREE_DAYS = answer("10:15  up 3 days,  2:03, 2 users, load averages: 1.52 1.61 1.70\n");
    private static final RemoteShell.Answer ONE_MINUTE = answer("10:16  up 1 min, 1 user, load averages: 3.01 1.20 0.80\n");
    private static final RemoteShell.Answer UNREACHABLE = new RemoteShell.Answer(-1, "", "");

    /** Answers {@code uptime} from a script (the last answer repeats; {@link #UNREACHABLE} throws), everything else as a healthy Mac. */
    private static final class FakeMac implements MachineShell {
        final Deque<RemoteShell.Answer> uptimes;
        final List<String> ran = new ArrayList<>();

        FakeMac(RemoteShell.Answer... uptimes) {
            this.uptimes = new ConcurrentLinkedDeque<>(List.of(uptimes));
        }

        @Override
        public synchronized RemoteShell.Answer run(String machine, Command command, Duration timeout) throws IOException {
            String line = command.program() + " " + String.join(" ", command.arguments());
            ran.add(line.strip());
            return switch (command.program()) {
                case "uptime" -> {
                    RemoteShell.Answer next = uptimes.size() > 1 ? uptimes.poll() : uptimes.peek();
                    if (next == UNREACHABLE) {
                        throw new IOException(machine + ": connection refused");
                    }
                    yield next;
                }
                case "rdma_ctl" -> answer("enabled\n");
                case "ibv_devinfo" -> answer("hca_id:\trdma_en2\n\tport:\t1\n\t\tstate:\t\t\tPORT_ACTIVE (4)\n");
                default -> answer("");
            };
        }

        /** How many times {@code uptime} was read before the RDMA check first ran. */
        int uptimeReadsBeforeVerification() {
            return (int) ran.subList(0, ran.indexOf("rdma_ctl status")).stream().filter(line -> line.equals("uptime")).count();
        }
    }

    private static RemoteShell.Answer answer(String stdout) {
        return new RemoteShell.Answer(0, stdout, "");
    }

    private static SupervisedCluster cluster() {
        return new SupervisedCluster("llm-a", URI.create("http://127.0.0.1:1/v1"), new SupervisedCluster.Policy(true),
                List.of(new SupervisedCluster.Rank(0, "studio-01", URI.create("http://127.0.0.1:1/"), LABEL, "/var/log/macfleet/node.err.log")));
    }

    private static void reboot(FakeMac mac) throws IOException {
        new ShellNodeControl(mac, Duration.ofSeconds(2), Duration.ofSeconds(20)).rebootVerifyAndStart(cluster());
        assertThat(mac.ran).endsWith("/bin/launchctl enable system/" + LABEL, "/bin/launchctl bootstrap system /Library/LaunchDaemons/" + LABEL + ".plist");
    }

    @Test
    void theOldSystemStillAnsweringIsNotTakenForTheNewBoot() throws IOException {
        // At the order, then twice more from the old system, then from the new boot.
        FakeMac mac = new FakeMac(THREE_DAYS, THREE_DAYS, THREE_DAYS, ONE_MINUTE);
        reboot(mac);
        assertThat(mac.uptimeReadsBeforeVerification()).isEqualTo(4);
    }

    @Test
    void seenUnreachableCountsAsRebooted() throws IOException {
        FakeMac mac = new FakeMac(THREE_DAYS, THREE_DAYS, UNREACHABLE, THREE_DAYS);
        reboot(mac);
        // Seen down at the third read: from then on it is verified, its uptime not read again.
        assertThat(mac.uptimeReadsBeforeVerification()).isEqualTo(3);
    }

    @Test
    void anUnreadableUptimeLeavesTheDecisionToTheVerification() throws IOException {
        FakeMac mac = new FakeMac(THREE_DAYS, THREE_DAYS, new RemoteShell.Answer(0, "uptime: no utmpx\n", ""));
        reboot(mac);
        assertThat(mac.uptimeReadsBeforeVerification()).isEqualTo(3);
    }
}
