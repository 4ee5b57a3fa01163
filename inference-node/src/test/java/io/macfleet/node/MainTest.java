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
}
