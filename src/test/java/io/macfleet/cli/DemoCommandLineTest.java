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
}
