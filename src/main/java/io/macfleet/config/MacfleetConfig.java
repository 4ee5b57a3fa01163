package io.macfleet.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/**
 * Every {@code macfleet.*} setting of the service and the CLI, in one typed tree (application.properties, system
 * properties {@code -Dmacfleet...}, environment variables {@code MACFLEET_...}). Inject it; the names are derived from
 * the methods in kebab case ({@code accounts().loginThrottle().failures()} is
 * {@code macfleet.accounts.login-throttle.failures}). A new setting is a method here, with its default.
 */
@ConfigMapping(prefix = "macfleet")
public interface MacfleetConfig {

    /** Where macfleet keeps its state (default ~/.macfleet); the default H2 database is a file under it. */
    String home();

    Database database();

    Accounts accounts();

    Playbooks playbooks();

    Console console();

    Security security();

    Supervision supervision();

    /** How `macfleet serve` keeps watching the machines (io.macfleet.observe). */
    Observation observation();

    /** Mac health (temperature, power, memory, panics, RDMA ports) and inference metrics on /q/metrics (io.macfleet.health, io.macfleet.inference). */
    Metrics metrics();

    /**
     * Not read by the application: {@code -Dmacfleet.benchmarks=true} enables the benchmark test classes and
     * {@code -Dmacfleet.aot.skip=true} builds without the launcher's AOT cache. Maven hands -D properties to the tests'
     * JVM, and this mapping refuses {@code macfleet.*} keys it does not declare (a misspelt setting is an error, not
     * silently ignored), so the two switches are declared here.
     */
    @WithDefault("false")
    boolean benchmarks();

    Aot aot();

    interface Aot {
        @WithDefault("false")
        boolean skip();
    }

    /** Checked by the inventory loader; read through {@code io.macfleet.secrets.SecretPolicy.configured()}, which also runs outside the service. */
    Secrets secrets();

    /** Read through {@code io.macfleet.deployment.ModelsDirectory.configured()}, which also runs outside the service. */
    Models models();

    /** The database, chosen at run time by its URL (H2 or PostgreSQL). */
    interface Database {
        String url();

        /** Empty for none. */
        Optional<String> user();

        /** A secret reference (env:NAME or file:PATH), never the password itself; empty for none. */
        Optional<String> password();
    }

    /** Sessions and login throttling of the console and the API. */
    interface Accounts {
        /** A session ends after this long without a request. */
        @WithDefault("8H")
        Duration sessionIdleTimeout();

        /** A session ends this long after login at the latest. */
        @WithDefault("24H")
        Duration sessionLifetime();

        LoginThrottle loginThrottle();

        /**
         * After {@link #failures()} failed logins within {@link #window()} (per user name and per client address),
         * attempts wait {@link #delay()} after the last failure, doubling with every further failure, at most the window.
         */
        interface LoginThrottle {
            @WithDefault("5")
            int failures();

            @WithDefault("15M")
            Duration window();

            @WithDefault("30S")
            Duration delay();
        }
    }

    /** Where `macfleet provision --playbook NAME` looks for playbooks besides the shipped ones. */
    interface Playbooks {
        Optional<String> directory();
    }

    interface Security {
        /** Against password guessing spread over many addresses. */
        LoginBrakeSettings loginBrake();
    }

    /** Where secret references may point (docs/security.md). */
    interface Secrets {
        /** Comma-separated directories {@code file:} references may name; default the state directory's secrets/ and ~/.ssh. */
        Optional<String> directories();

        /** The prefix every {@code env:} reference must have. */
        @WithDefault("MACFLEET_")
        String environmentPrefix();
    }

    /** Where deployable model files live on the control host (docs/security.md). */
    interface Models {
        /** Deploys take model files under this directory only; default the state directory's models/. */
        Optional<String> directory();

        /** The Hugging Face hub (or a mirror answering like it) that hf: sources come from. */
        @WithDefault("https://huggingface.co")
        String hubUrl();

        /** A secret reference (env:NAME or file:PATH) to the hub token for gated or private repositories. */
        Optional<String> hubToken();

        /** The directory under which REST clients may name local model sources to add; none: only hf: sources. */
        Optional<String> sourceDirectory();
    }

    interface Observation {
        /** Whether `macfleet serve` gathers every machine's facts by itself, on a schedule. */
        @WithDefault("true")
        boolean enabled();

        /** How often each machine is observed. */
        @WithDefault("60S")
        Duration interval();

        /** Each round's interval varies by up to this fraction either way, so that machines spread over the interval. */
        @WithDefault("0.2")
        double jitter();

        /** Machines observed at the same time. */
        @WithDefault("16")
        int parallelism();

        /** Time to reach a machine (connect, host key, authentication). */
        @WithDefault("10S")
        Duration connectTimeout();

        /** Time for all of one machine's commands together, once reached. */
        @WithDefault("20S")
        Duration commandTimeout();
    }

    interface Metrics {
        /** Whether `macfleet serve` gathers Mac health and scrapes the inference runtimes by itself. */
        @WithDefault("true")
        boolean enabled();

        /** How often each Mac's health is read over SSH (powermetrics samples for one second of it). */
        @WithDefault("60S")
        Duration healthInterval();

        /** How often each cluster's runtime metrics are scraped (tokens per second is the rate over this interval). */
        @WithDefault("15S")
        Duration inferenceInterval();

        /** Time for one Mac's health commands together, once reached. */
        @WithDefault("20S")
        Duration healthCommandTimeout();
    }

    interface Console {
        /** Facts older than this are shown as stale in the fleet overview. */
        @WithDefault("PT1H")
        Duration factsStaleAfter();

        /** How often the charts' in-memory history samples the metrics (below the hour chart's 15 s slots). */
        @WithDefault("10S")
        Duration chartInterval();

        /** At most this many series (one metric of one cluster or Mac) are kept for the charts: about 10 KB each. */
        @WithDefault("2000")
        int chartSeries();
    }

    /** The node supervision of deployed clusters (docs/inference-deployment.md, "Supervision"). */
    interface Supervision {
        /** Whether this {@code macfleet serve} takes part in supervising (it still only acts on clusters whose lease it holds). */
        @WithDefault("true")
        boolean enabled();

        /** How often every supervised cluster is looked at. */
        @WithDefault("5S")
        Duration interval();

        /** How long a rank may be down before the whole cluster is restarted (launchd and the node's own re-forming get this long). */
        @WithDefault("10S")
        Duration restartAfter();

        /** Wait after the first ordered restart; doubles with each further one. */
        @WithDefault("10S")
        Duration backoff();

        @WithDefault("5M")
        Duration maximumBackoff();

        /** Ordered restarts of a cluster without it serving again, after which the supervisor stops and alerts. */
        @WithDefault("3")
        int attempts();

        /** How long {@code ibv_devinfo} may take before RDMA counts as wedged. */
        @WithDefault("5S")
        Duration rdmaTimeout();

        /** How long a coordinated reboot may take until every machine answers again. */
        @WithDefault("10M")
        Duration rebootTimeout();

        /** A URL that receives every alert as a JSON POST (cluster, kind, detail, at); none by default. */
        Optional<String> webhook();
    }
}
