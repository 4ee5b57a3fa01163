package io.macfleet.demo;

import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The demo this service runs, if any: {@code macfleet demo} starts it here, and the simulator's control API acts on
 * it (404 without one). One per application, forgotten when the demo is closed; replaces a static "current demo".
 */
@ApplicationScoped
public class RunningDemo {

    private final AtomicReference<DemoEnvironment> running = new AtomicReference<>();

    /** Starts a demo and makes it the running one until it is closed. */
    public DemoEnvironment start(DemoEnvironment.Options options) throws IOException {
        DemoEnvironment demo = DemoEnvironment.start(options);
        attach(demo);
        return demo;
    }

    /** Makes {@code demo} (already started) the running one until it is closed. */
    public void attach(DemoEnvironment demo) {
        running.set(demo);
        demo.onClose(() -> running.compareAndSet(demo, null));
    }

    public Optional<DemoEnvironment> current() {
        return Optional.ofNullable(running.get());
    }
}
