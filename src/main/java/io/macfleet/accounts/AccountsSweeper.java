package io.macfleet.accounts;

import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Instant;

/** Deletes ended sessions and failed logins older than the throttle window (only `macfleet serve` runs the scheduler). */
@ApplicationScoped
class AccountsSweeper {

    @Inject
    AccountService accounts;

    @Scheduled(every = "10m", delayed = "1m", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        accounts.sweep(Instant.now());
    }
}
