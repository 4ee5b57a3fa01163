package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The Recovery walkthrough on the console: every waiting Mac asked for at once, answered by name or all together. */
class ConsoleOperatorPromptTest {

    private static OperatorRequest request(String machine) {
        return new OperatorRequest(7, machine, "rdma-enabled", "Enable RDMA over Thunderbolt in macOS Recovery",
                List.of("Connect a display, keyboard and mouse to " + machine + " if it has none.", "Choose Utilities > Terminal.",
                        "Type: rdma_ctl enable   and press Return."),
                "Terminal accepts `rdma_ctl enable` without a message.", 300, "rdma_ctl status does not say enabled: RDMA is still off")
                .withDetails("rdma_ctl status does not say enabled: RDMA is still off (`rdma_ctl status` output does not match /^enabled/: disabled)");
    }

    @Test
    void everyWaitingMacIsAskedForAtOnceAndAnsweredByNameOrAll() throws Exception {
        ConsoleTranscript console = new ConsoleTranscript();
        ConsoleListener listener = new ConsoleListener(console.out, console.input(), false, true, "olga");

        CompletableFuture<OperatorAnswer> first = listener.operatorNeeded(request("studio-01"));
        CompletableFuture<OperatorAnswer> second = listener.operatorNeeded(request("studio-02"));
        CompletableFuture<OperatorAnswer> third = listener.operatorNeeded(request("studio-03"));

        console.await(Pattern.compile("\\n  studio-01 studio-02 studio-03 > $"), 0, Duration.ofSeconds(10));
        String asked = console.text();
        assertThat(asked).containsOnlyOnce("Enable RDMA over Thunderbolt in macOS Recovery on studio-01, studio-02, studio-03 (run 7, step rdma-enabled)")
                .containsOnlyOnce("   2. Choose Utilities > Terminal.")
                .contains("   1. Connect a display, keyboard and mouse to studio-01", "      Connect a display, keyboard and mouse to studio-03",
                        "  Why: rdma_ctl status does not say enabled: RDMA is still off\n",
                        "Expect about 5 minutes until each of them answers over SSH again.",
                        "Waiting for a person: studio-01, studio-02, studio-03.", "'done all'")
                // Spoken to a person: no patterns or raw output unless asked for.
                .doesNotContain("/^enabled/", "output does not match");

        int from = console.text().length();
        console.type("done");
        console.await(Pattern.compile("3 Macs are waiting: say which \\(done studio-01, or done all\\) > $"), from, Duration.ofSeconds(10));
        console.type("details studio-02");
        console.await(Pattern.compile("  studio-02: rdma_ctl status does not say enabled: RDMA is still off \\(`rdma_ctl status` output does not match /\\^enabled/: disabled\\)"),
                from, Duration.ofSeconds(10));
        console.type("done studio-09");
        console.await(Pattern.compile("not waiting for a person: studio-09 \\(waiting: studio-01, studio-02, studio-03\\) > $"), from, Duration.ofSeconds(10));
        assertThat(first).isNotDone();

        console.type("done studio-02");
        assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(OperatorAnswer.done("olga"));
        console.await(Pattern.compile("\\n  studio-01 studio-03 > $"), from, Duration.ofSeconds(10));
        assertThat(first).isNotDone();
        assertThat(third).isNotDone();

        console.type("done all");
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(OperatorAnswer.done("olga"));
        assertThat(third.get(10, TimeUnit.SECONDS)).isEqualTo(OperatorAnswer.done("olga"));
        assertThat(console.text()).contains("waiting for studio-01, studio-03 to answer over SSH and verifying");
    }

    @Test
    void aMacFoundDoneWhileWaitingIsNoLongerAskedFor() throws Exception {
        ConsoleTranscript console = new ConsoleTranscript();
        ConsoleListener listener = new ConsoleListener(console.out, console.input(), false, true, "olga");
        CompletableFuture<OperatorAnswer> first = listener.operatorNeeded(request("studio-01"));
        CompletableFuture<OperatorAnswer> second = listener.operatorNeeded(request("studio-02"));
        console.await(Pattern.compile("\\n  studio-01 studio-02 > $"), 0, Duration.ofSeconds(10));

        // What the run does when its check, made again while waiting, finds the Mac done.
        second.cancel(true);

        console.await(Pattern.compile("studio-02: done meanwhile \\(checked again\\), no longer waiting for a person\\n(.*\\n)*  studio-01 > $"), 0,
                Duration.ofSeconds(10));
        console.type("done");
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(OperatorAnswer.done("olga"));
    }

    @Test
    void aLineNamingAMacThatFinishedMeanwhileStillAnswersTheOthers() throws Exception {
        ConsoleTranscript console = new ConsoleTranscript();
        ThreeWaiting waiting = threeWaitingStudio02FinishedMeanwhile(console);
        CompletableFuture<OperatorAnswer> first = waiting.first();
        CompletableFuture<OperatorAnswer> third = waiting.third();

        // Typed as the three were shown; studio-02 finished in the meantime.
        int from = console.text().length();
        console.type("done studio-01 studio-02 studio-03");
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(OperatorAnswer.done("olga"));
        assertThat(third.get(10, TimeUnit.SECONDS)).isEqualTo(OperatorAnswer.done("olga"));
        assertThat(console.text().substring(from)).contains("studio-02: no longer waiting for a person (finished meanwhile)")
                .doesNotContain("not waiting for a person: studio-02");
    }

    @Test
    void aLineNamingOnlyMacsThatFinishedMeanwhileAsksAgainAndAMistypedNameIsStillRefused() throws Exception {
        ConsoleTranscript console = new ConsoleTranscript();
        ThreeWaiting waiting = threeWaitingStudio02FinishedMeanwhile(console);
        CompletableFuture<OperatorAnswer> first = waiting.first();
        CompletableFuture<OperatorAnswer> third = waiting.third();

        int from = console.text().length();
        console.type("done studio-02");
        console.await(Pattern.compile("studio-02: no longer waiting for a person \\(finished meanwhile\\), nothing to do for it\\n  studio-01 studio-03 > $"),
                from, Duration.ofSeconds(10));
        console.type("done studio-01 studio-09");
        console.await(Pattern.compile("not waiting for a person: studio-09 \\(waiting: studio-01, studio-03\\) > $"), from, Duration.ofSeconds(10));
        assertThat(first).isNotDone();
        assertThat(third).isNotDone();
    }

    record ThreeWaiting(CompletableFuture<OperatorAnswer> first, CompletableFuture<OperatorAnswer> third) {
    }

    /** studio-01..03 asked for at once; then studio-02 is found done by its check (the prompt names the other two). */
    private static ThreeWaiting threeWaitingStudio02FinishedMeanwhile(ConsoleTranscript console) throws Exception {
        ConsoleListener listener = new ConsoleListener(console.out, console.input(), false, true, "olga");
        CompletableFuture<OperatorAnswer> first = listener.operatorNeeded(request("studio-01"));
        CompletableFuture<OperatorAnswer> second = listener.operatorNeeded(request("studio-02"));
        CompletableFuture<OperatorAnswer> third = listener.operatorNeeded(request("studio-03"));
        console.await(Pattern.compile("\\n  studio-01 studio-02 studio-03 > $"), 0, Duration.ofSeconds(10));
        second.cancel(true);
        console.await(Pattern.compile("\\n  studio-01 studio-03 > $"), 0, Duration.ofSeconds(10));
        return new ThreeWaiting(first, third);
    }
}
