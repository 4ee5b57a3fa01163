package io.macfleet.supervision;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.core.JsonProcessingException;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.config.MacfleetConfig;
import io.macfleet.inventory.DesiredStateStore;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code macfleet supervision [CLUSTER]}: the supervisor's latest look at each deployed cluster, as every instance of
 * {@code macfleet serve} on this database shows it (read from the database, so it needs no running service here):
 * serving or not, who looked and when, restarts, the open alert, an action under way, and each rank. Where
 * {@code macfleet node status} asks launchd on the Macs now, this says what the supervisor concluded.
 */
@Command(name = "supervision", mixinStandardHelpOptions = true,
        description = "The inference node's supervision: each deployed cluster as its supervisor (macfleet serve) last saw it.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every cluster shown serves, by a current look", "1:a cluster does not serve, its look is stale or unreadable, or it has none yet",
                "2:unknown cluster"})
public class SupervisionCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "CLUSTER", description = "Only this cluster.")
    String cluster;

    @Mixin
    JsonOption json;

    @Inject
    SupervisionStatusStore store;

    @Inject
    DesiredStateStore desiredState;

    @Inject
    MacfleetConfig config;

    @Override
    public Integer call() throws JsonProcessingException {
        PrintWriter out = spec.commandLine().getOut();
        if (cluster != null && desiredState.cluster(cluster).isEmpty()) {
            throw CommandException.usage("no cluster named '" + cluster + "' in the applied inventory");
        }
        // This process supervises nothing: every status is a stored one, stale by the service's own rule.
        List<SharedStatus> statuses = new SharedStatuses(store, "cli", config.supervision().interval(), Clock.systemUTC()).all().stream()
                .filter(status -> cluster == null || status.cluster().equals(cluster)).toList();
        Instant now = Instant.now();
        if (json.on()) {
            out.println(SupervisionStatusStore.JSON.writerWithDefaultPrettyPrinter()
                    .writeValueAsString(statuses.stream().map(status -> SupervisionResource.ClusterView.of(status, now)).toList()));
        } else if (statuses.isEmpty()) {
            out.println(cluster != null
                    ? "No supervision status for cluster " + cluster + " yet: it appears once `macfleet serve` supervises it after `macfleet node deploy " + cluster + "`."
                    : "No supervised cluster yet: statuses appear once `macfleet serve` supervises a cluster deployed with `macfleet node deploy`.");
        } else {
            statuses.forEach(status -> print(out, status, now));
        }
        out.flush();
        boolean allServing = !statuses.isEmpty() && statuses.stream().allMatch(status -> status instanceof SharedStatus.Observed observed
                && observed.status().serving() && !observed.stale());
        if (!allServing) {
            throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
        }
        return ExitCodes.OK;
    }

    private static void print(PrintWriter out, SharedStatus shared, Instant now) {
        switch (shared) {
            case SharedStatus.Unreadable unreadable -> out.println(unreadable.cluster() + "  " + unreadable.explain());
            case SharedStatus.Observed observed -> {
                ClusterStatus status = observed.status();
                out.println(status.name() + "  " + (observed.stale() ? "NOT CURRENT, " + observed.lastSeen() + ": " : "")
                        + status.diagnosis().explain());
                if (!observed.stale()) {
                    out.println("  seen by " + observed.observedBy() + " at " + SharedStatus.utc(observed.observedAt()));
                }
                out.println("  endpoint " + status.observation().cluster().endpoint() + "; ordered restarts " + status.restarts()
                        + status.servingSince().map(since -> "; serving since " + SharedStatus.utc(since)).orElse(""));
                status.acting().ifPresent(acting -> out.println("  under way: " + acting.what() + " since " + SharedStatus.utc(acting.since())));
                status.alert().ifPresent(alert -> out.println("  ALERT: " + alert));
                out.printf(Locale.ROOT, "  %-4s %-12s %-11s %-12s %-7s %-5s %-16s %-9s %s%n", "rank", "machine", "health", "daemon", "pid",
                        "runs", "version", "tokens/s", "uptime");
                for (RankObservation rank : status.observation().ranks()) {
                    out.printf(Locale.ROOT, "  %-4d %-12s %-11s %-12s %-7s %-5s %-16s %-9s %s%n", rank.rank(), rank.machine(),
                            rank.health().name().toLowerCase(Locale.ROOT),
                            rank.launchd().map(service -> service.loaded() ? service.state() : "not loaded").orElse("unreachable"),
                            rank.pid().map(String::valueOf).orElse("-"), rank.runs().map(String::valueOf).orElse("-"),
                            rank.version().orElse("-"),
                            rank.tokensPerSecond().isPresent() ? String.format(Locale.ROOT, "%.1f", rank.tokensPerSecond().getAsDouble()) : "-",
                            observed.uptimeText(rank, now).orElse("-"));
                }
            }
        }
    }
}
