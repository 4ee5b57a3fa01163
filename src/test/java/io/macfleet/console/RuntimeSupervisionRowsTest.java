package io.macfleet.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.deployment.LaunchdService;
import io.macfleet.runtime.LlamaCppRuntime;
import io.macfleet.runtime.RuntimeService.DaemonStatus;
import io.macfleet.supervision.RuntimeLook;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The supervision page's rows of a llama.cpp cluster, from a look (no Macs): health, launchd, the link's transport, the alert. */
class RuntimeSupervisionRowsTest {

    @Test
    void aCrashLoopingRpcServerShowsItsExitItsLinkAndTheAlertWithoutTheClusterPrefix() {
        DaemonStatus head = new DaemonStatus("studio-01", 0, LlamaCppRuntime.SERVER_LABEL,
                new LaunchdService(true, "running", OptionalLong.of(4242), OptionalInt.of(3), new LaunchdService.LastExit.NeverExited()),
                "GET http://10.0.0.11:8080/health answers 200", Optional.empty(), Optional.empty(), Optional.empty());
        DaemonStatus peer = new DaemonStatus("studio-03", 2, LlamaCppRuntime.RPC_LABEL,
                new LaunchdService(true, "spawn scheduled", OptionalLong.empty(), OptionalInt.of(7), new LaunchdService.LastExit.Code(1, "")),
                "TCP 10.10.3.2:50052 accepts", Optional.of("ConnectException: Connection refused"), Optional.of("tcp (fallback: the peer offered no RDMA)"),
                Optional.empty());
        RuntimeLook look = new RuntimeLook("llm-a", "llama.cpp", "http://10.0.0.11:8080/v1", Instant.parse("2026-11-28T18:00:00Z"), false,
                "not serving; alert open", Optional.of("cluster llm-a: crash loop: io.macfleet.ggml-rpc-server on studio-03 did not stay up"),
                Optional.empty(), List.of(head, peer));

        SupervisionConsoleResource.RuntimeClusterRow row = SupervisionConsoleResource.row(look);

        assertThat(row.serving()).isFalse();
        assertThat(row.alert()).isEqualTo("crash loop: io.macfleet.ggml-rpc-server on studio-03 did not stay up");
        assertThat(row.endpoint()).isEqualTo("http://10.0.0.11:8080/v1");
        assertThat(row.seen()).contains("18:00:00");
        assertThat(row.daemons()).hasSize(2);
        SupervisionConsoleResource.DaemonRow ready = row.daemons().getFirst();
        assertThat(ready.health()).isEqualTo("ready");
        assertThat(ready.pid()).isEqualTo("4242");
        assertThat(ready.link()).isEqualTo("–");
        SupervisionConsoleResource.DaemonRow down = row.daemons().getLast();
        assertThat(down.health()).isEqualTo("down: ConnectException: Connection refused");
        assertThat(down.healthCss()).isEqualTo("bad");
        assertThat(down.runs()).isEqualTo("7");
        assertThat(down.lastExit()).isEqualTo("1");
        assertThat(down.link()).isEqualTo("tcp (fallback: the peer offered no RDMA)");
    }
}
