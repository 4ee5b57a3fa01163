package io.macfleet.demo;

import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import io.macfleet.api.JsonShape;
import io.quarkus.test.junit.QuarkusTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The simulator control API: absent outside demo mode, and a working console and fault switch inside it. */
@QuarkusTest
class SimulatorResourceTest {

    /** What `macfleet demo` starts its demo with, so that the control API acts on it. */
    @jakarta.inject.Inject
    RunningDemo runningDemo;

    @Test
    void controlApiAnswersOnlyWhileADemoRuns() throws Exception {
        viewer().get("/api/v1/simulator/machines").then().statusCode(404).body("title", equalTo("Simulator not running"));

        Path directory = Files.createTempDirectory("macfleet-demo-api");
        try (DemoEnvironment demo = runningDemo.start(new DemoEnvironment.Options(directory, 2, "127.0.0.51", 0, Duration.ofMillis(300), null))) {
            String machines = viewer().get("/api/v1/simulator/machines").then().statusCode(200).body("$", hasSize(2))
                    .body("[1].name", equalTo("studio-02")).body("[1].macosVersion", equalTo("26.1")).extract().asString();
            // The whole shape, in order: `macfleet demo machines` and scripts read these names.
            assertThat(JsonShape.fieldNames(machines, "/1")).containsExactly("name", "address", "sshPort", "power", "sshReachable", "model",
                    "memoryGb", "serialNumber", "macosVersion", "macosBuild", "rdmaEnabled", "bootstrapTokenEscrowed", "thunderboltBridgeActive",
                    "faults", "daemons");
            assertThat(JsonShape.fieldNames(machines, "/1/faults")).containsExactly("hang", "slowMillis", "dropMidCommand", "garbage",
                    "garbledPrograms", "rebootNeverReturns", "diskFull", "rdmaWedged", "crashLoopingDaemons");
            String cables = viewer().get("/api/v1/simulator/cables").then().statusCode(200).body("$", hasSize(1)).extract().asString();
            assertThat(JsonShape.fieldNames(cables, "/0")).containsExactly("a", "b", "speed", "oneSided");

            operator().contentType("application/json").body("{\"machine\":\"studio-02\",\"fault\":\"slow\",\"millis\":50}")
                    .post("/api/v1/simulator/faults").then().statusCode(200).body("result", equalTo("slow on studio-02"));
            viewer().get("/api/v1/simulator/machines/studio-02").then().statusCode(200).body("faults.slowMillis", equalTo(50));
            operator().contentType("application/json").body("{\"machine\":\"studio-09\",\"fault\":\"hang\"}")
                    .post("/api/v1/simulator/faults").then().statusCode(404).body("detail", containsString("studio-09"));

            operator().contentType("application/json").body("{\"command\":\"rdma_ctl enable\"}")
                    .post("/api/v1/simulator/machines/studio-02/recovery/commands").then().statusCode(409).body("detail", containsString("not in Recovery"));
            operator().contentType("application/json").body("{}").post("/api/v1/simulator/machines/studio-02/recovery").then().statusCode(200)
                    .body("power", equalTo("recovery")).body("sshReachable", equalTo(false));
            String output = operator().contentType("application/json").body("{\"command\":\"rdma_ctl enable\"}")
                    .post("/api/v1/simulator/machines/studio-02/recovery/commands").then().statusCode(200).body("exitCode", equalTo(0))
                    .extract().asString();
            assertThat(JsonShape.fieldNames(output, "")).containsExactly("output", "exitCode", "power");
            operator().contentType("application/json").body("{\"command\":\"reboot\"}")
                    .post("/api/v1/simulator/machines/studio-02/recovery/commands").then().statusCode(200).body("power", equalTo("rebooting"));
            // The simulated reboot takes its time: wait for the Mac to be back (a condition, not a fixed sleep), then check it.
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
            while (!"on".equals(viewer().get("/api/v1/simulator/machines/studio-02").then().statusCode(200).extract().path("power"))
                    && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L);
            }
            viewer().get("/api/v1/simulator/machines/studio-02").then().statusCode(200).body("rdmaEnabled", equalTo(true)).body("power", equalTo("on"));
        }
    }
}
