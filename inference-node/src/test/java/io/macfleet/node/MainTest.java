package io.macfleet.node;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class MainTest {
    @TempDir
    Path directory;

    private record Run(int code, String out, String err) {
    }

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out), new PrintStream(err));
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void makeModelThenGenerate() {
        Path model = directory.resolve("m.gguf");
        Run made = run("make-model", "--preset", "tiny", "--type", "q4_0", "--seed", "3", "--out", model.toString());
        assertThat(made.code()).isZero();
        assertThat(made.out()).contains("macfleet-tiny");
        Run generated = run("generate", "--model", model.toString(), "--prompt", "Hello", "--chat", "--max-tokens", "5");
        assertThat(generated.code()).as(generated.err()).isZero();
        assertThat(generated.err()).contains("prompt tokens").contains("tokens/s");
    }

    @Test
    void usageErrorsExitWithTwo() {
        assertThat(run().code()).isEqualTo(2);
        assertThat(run("frobnicate").err()).contains("unknown command 'frobnicate'");
        assertThat(run("make-model", "--preset", "huge", "--out", "x").err()).contains("unknown preset 'huge'");
        assertThat(run("make-model", "--preset", "tiny", "--arch", "gpt-j", "--out", "x").err()).contains("unknown architecture 'gpt-j'");
        Run misspelt = run("generate", "--model", "x.gguf", "--prompt", "x", "--temprature", "0");
        assertThat(misspelt.code()).isEqualTo(2);
        assertThat(misspelt.err()).contains("unknown option --temprature for generate").contains("--temperature");
        Run missing = run("generate", "--model", directory.resolve("absent.gguf").toString(), "--prompt", "x");
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).contains("no such file").contains("absent.gguf");
        assertThat(run("serve").err()).contains("missing --model");
    }

    /** proxy: refused before it listens, exit 2, for a wildcard address, a missing upstream or a key given in clear. */
    @Test
    void proxyRefusesAWildcardListenAddressAndAKeyOnTheCommandLine() {
        Run wildcard = run("proxy", "--listen", "0.0.0.0:18080", "--to", "127.0.0.1:18081", "--api-key", "env:MACFLEET_ABSENT_KEY");
        assertThat(wildcard.code()).isEqualTo(2);
        assertThat(wildcard.err()).contains("--listen 0.0.0.0:18080 is a wildcard address");
        assertThat(run("proxy", "--listen", "127.0.0.1:0", "--api-key", "env:X").err()).contains("missing --to");
        Run clear = run("proxy", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:1", "--api-key", "sk-0123456789abcdef");
        assertThat(clear.code()).isEqualTo(2);
        assertThat(clear.err()).contains("--api-key takes a reference").doesNotContain("0123456789abcdef");
    }

    /** verify-model (issue 29): what a deploy runs on one Mac before it switches; 0 only for a model that loads and is the one expected. */
    @Test
    void verifyModelLoadsTheModelAndChecksItsHash() throws Exception {
        Path model = directory.resolve("v.gguf");
        assertThat(run("make-model", "--preset", "tiny", "--type", "f32", "--seed", "5", "--out", model.toString()).code()).isZero();
        String sha256 = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(java.nio.file.Files.readAllBytes(model)));
        Run loads = run("verify-model", "--model", model.toString(), "--model-sha256", sha256);
        assertThat(loads.code()).as(loads.err()).isZero();
        assertThat(loads.out()).startsWith("model " + model + " loads");

        Run otherHash = run("verify-model", "--model", model.toString(), "--model-sha256", "0".repeat(64));
        assertThat(otherHash.code()).isEqualTo(1);
        assertThat(otherHash.err()).contains("does not load", "is not the model this node was given");

        // The GGUF magic and a header, then nothing: what a copy cut short or a damaged file looks like.
        Path truncated = directory.resolve("cut.gguf");
        byte[] whole = java.nio.file.Files.readAllBytes(model);
        java.nio.file.Files.write(truncated, java.util.Arrays.copyOf(whole, whole.length / 3));
        Run cut = run("verify-model", "--model", truncated.toString());
        assertThat(cut.code()).isEqualTo(1);
        assertThat(cut.err()).contains("model " + truncated + " does not load").doesNotContain("usage:");
    }
}
