package io.macfleet.runtime;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One daemon of a runtime on one Mac, as {@code GET /api/v1/clusters/NAME/node} ({@code daemons}) and
 * {@code node status --json} answer it. What could not be read is left out rather than sent as null.
 *
 * @param probe what was probed (e.g. "GET http://.../health answers 200")
 * @param ready launchd runs it and its probe answered
 * @param problem what the probe saw when it did not answer
 * @param transport for a daemon that ends a link between Macs: the transport its log reports ("rdma", "tcp (fallback: ...)")
 */
public record RuntimeStatusBody(int rank, String machine, String label, String state,
                                @JsonInclude(JsonInclude.Include.NON_NULL) Long pid,
                                @JsonInclude(JsonInclude.Include.NON_NULL) Integer runs,
                                String probe, boolean ready,
                                @JsonInclude(JsonInclude.Include.NON_NULL) String problem,
                                @JsonInclude(JsonInclude.Include.NON_NULL) String transport,
                                @JsonInclude(JsonInclude.Include.NON_NULL) String error) {

    public static RuntimeStatusBody of(RuntimeService.DaemonStatus status) {
        String state = status.launchd().running() ? "running" : status.launchd().loaded() ? status.launchd().state() : "not loaded";
        return new RuntimeStatusBody(status.rank(), status.machine(), status.label(), state,
                status.launchd().pid().isPresent() ? status.launchd().pid().getAsLong() : null,
                status.launchd().runs().isPresent() ? status.launchd().runs().getAsInt() : null,
                status.probe(), status.ready(), status.problem().orElse(null), status.transport().orElse(null), status.error().orElse(null));
    }
}
