package io.macfleet.simulator.mdm;

import io.macfleet.simulator.MacosRelease;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** A Mac without SSH: only what the MDM client sees. Restarts take {@code restartDuration}. */
public final class StandaloneHost implements DeviceHost {
    private static final ScheduledExecutorService RESTARTS = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "standalone-mac-restarts");
        thread.setDaemon(true);
        return thread;
    });

    private final String modelIdentifier;
    private final Duration restartDuration;
    private volatile MacosRelease release;
    private volatile boolean poweredOn = true;
    private volatile Instant bootTime = Instant.now();
    private volatile boolean bootstrapTokenEscrowed = true;
    private volatile int restarts;

    public StandaloneHost(String modelIdentifier, MacosRelease release, Duration restartDuration) {
        this.modelIdentifier = modelIdentifier;
        this.release = release;
        this.restartDuration = restartDuration;
    }

    @Override
    public String modelIdentifier() {
        return modelIdentifier;
    }

    @Override
    public MacosRelease release() {
        return release;
    }

    @Override
    public boolean poweredOn() {
        return poweredOn;
    }

    @Override
    public Instant bootTime() {
        return bootTime;
    }

    @Override
    public boolean bootstrapTokenEscrowed() {
        return bootstrapTokenEscrowed;
    }

    public void setBootstrapTokenEscrowed(boolean escrowed) {
        this.bootstrapTokenEscrowed = escrowed;
    }

    public void powerOff() {
        poweredOn = false;
    }

    public void powerOn() {
        if (!poweredOn) {
            bootTime = Instant.now();
            poweredOn = true;
        }
    }

    public int restarts() {
        return restarts;
    }

    @Override
    public void installAndRestart(MacosRelease next) {
        restartInto(next);
    }

    @Override
    public void restart() {
        restartInto(release);
    }

    private void restartInto(MacosRelease next) {
        poweredOn = false;
        restarts++;
        RESTARTS.schedule(() -> {
            release = next;
            bootTime = Instant.now();
            poweredOn = true;
        }, restartDuration.toMillis(), TimeUnit.MILLISECONDS);
    }
}
