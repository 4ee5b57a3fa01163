package io.macfleet.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** `macfleet demo` opens the HTTP listener; its client subcommands must not (they talk to the running one). */
class DemoCommandLineTest {

    @Test
    void demoServesButItsClientSubcommandsDoNot() {
        assertThat(MacfleetMain.isServe("demo")).isTrue();
        assertThat(MacfleetMain.isServe("demo", "--machines", "8")).isTrue();
        assertThat(MacfleetMain.isServe("serve")).isTrue();
        assertThat(MacfleetMain.isServe("demo", "recovery", "studio-02", "rdma_ctl enable")).isFalse();
        assertThat(MacfleetMain.isServe("demo", "fault", "studio-02", "hang")).isFalse();
        assertThat(MacfleetMain.isServe("demo", "machines")).isFalse();
        assertThat(MacfleetMain.isServe("inventory", "apply")).isFalse();
    }

    @Test
    void demoMachinesIsATableForPeople() {
        String body = "[{\"name\":\"studio-01\",\"address\":\"127.0.0.11\",\"sshPort\":2222,\"power\":\"on\",\"sshReachable\":true,"
                + "\"memoryGb\":512,\"macosVersion\":\"26.1\",\"rdmaEnabled\":false,\"thunderboltBridgeActive\":true,"
                + "\"faults\":{\"hang\":true,\"slowMillis\":0,\"crashLoopingDaemons\":[]}},"
                + "{\"name\":\"studio-02\",\"address\":\"127.0.0.12\",\"sshPort\":2222,\"power\":\"off\",\"sshReachable\":false,"
                + "\"memoryGb\":256,\"macosVersion\":\"26.2\",\"rdmaEnabled\":true,\"thunderboltBridgeActive\":false,"
                + "\"faults\":{\"hang\":false,\"slowMillis\":0,\"crashLoopingDaemons\":[]}}]";

        String table = DemoCommand.machinesTable(body);

        assertThat(table.lines().toList()).containsExactly(
                "machine      ssh                   power     macOS  RDMA  bridge memory  faults",
                "studio-01    127.0.0.11:2222       on        26.1   off   on      512 GB hang",
                "studio-02    127.0.0.12:2222 (down) off       26.2   on    off     256 GB -");
    }
}
