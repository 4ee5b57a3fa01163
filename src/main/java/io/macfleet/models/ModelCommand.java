package io.macfleet.models;

import io.macfleet.command.JsonOption;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.macfleet.command.ActorOption;
import io.macfleet.command.CommandException;
import io.macfleet.command.CommandFailure;
import io.macfleet.command.ExitCodes;
import io.macfleet.secrets.SecretReference;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code macfleet model}: the model catalogue (docs/models.md). */
@Command(name = "model", mixinStandardHelpOptions = true,
        description = "The model catalogue: models by name, their files with sizes and SHA-256, format and runtimes; added once from a"
                + " local file or directory or from a Hugging Face repository.",
        subcommands = {ModelCommand.Add.class, ModelCommand.ListModels.class, ModelCommand.Show.class, ModelCommand.Remove.class,
                ModelCommand.Fit.class})
public class ModelCommand {

    /** Made on first use: picocli creates every command of the tree, even for --version. */
    static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

        static String write(Object value) {
            try {
                return MAPPER.writeValueAsString(value);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Command(name = "add", mixinStandardHelpOptions = true,
            description = {"Add model NAME from SOURCE: a GGUF file (the first part of a split GGUF brings all parts), a directory"
                    + " (an MLX model: config.json and its safetensors; or GGUF files), or hf:ORG/REPOSITORY@REVISION (downloaded once,"
                    + " resumable, verified against the hub's SHA-256). The files are stored under macfleet.home/models/NAME/."},
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:added", "1:the download or the copy failed (a .partial download is resumed by the next add)",
                    "2:bad input (not a model, name taken, unknown source)"})
    static class Add implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "The model's name in the catalogue (what inference.model names).")
        String name;

        @Parameters(index = "1", paramLabel = "SOURCE", description = "A GGUF file, a model directory, or hf:ORG/REPOSITORY@REVISION.")
        String source;

        @Option(names = "--include", paramLabel = "GLOB", description = "Only the source's files this glob matches (e.g. '*Q4_K_M*.gguf').")
        String include;

        @Option(names = "--hub-token", paramLabel = "REFERENCE",
                description = "The hub token as a secret reference (env:NAME or file:PATH; default macfleet.models.hub-token).")
        String hubToken;

        @Mixin
        JsonOption json;

        @Option(names = "--via", paramLabel = "MACHINE", description = "Download an hf: source on this Mac (over SSH, with its own curl and"
                + " shasum) instead of on this host; the catalogue records that the Mac holds it.")
        String via;

        @Mixin
        ActorOption actor;

        @Mixin
        io.macfleet.ssh.SshOptions ssh;

        @Inject
        ModelCatalogue catalogue;

        @Inject
        MacDownloads macDownloads;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            Optional<SecretReference> token;
            try {
                token = Optional.ofNullable(hubToken).map(SecretReference::of);
            } catch (IllegalArgumentException e) {
                throw new ModelRefused("--hub-token: " + e.getMessage());
            }
            HuggingFaceHub.Progress progress = json.on() ? HuggingFaceHub.Progress.NONE : new ProgressBar(out);
            CatalogueModel model;
            if (via != null) {
                io.macfleet.ssh.SshSettings settings;
                try {
                    settings = ssh.settings(actor.name());
                } catch (IllegalArgumentException e) {
                    throw new ModelRefused(e.getMessage());
                }
                model = macDownloads.add(name, source, Optional.ofNullable(include), token, via, settings, progress);
            } else {
                model = catalogue.add(name, source, Optional.ofNullable(include), token, actor.name(), progress);
            }
            out.println(json.on() ? Json.write(model) : "added " + describe(model) + (via == null ? "" : " (held on " + via + ")"));
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "The catalogue's models.")
    static class ListModels implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        JsonOption json;

        @Inject
        ModelCatalogue catalogue;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            List<CatalogueModel> models = catalogue.list();
            if (json.on()) {
                out.println(Json.write(models));
            } else if (models.isEmpty()) {
                out.println("no models in the catalogue (macfleet model add NAME SOURCE)");
            } else {
                out.printf(Locale.ROOT, "%-28s %-5s %-14s %-10s %10s %5s  %s%n", "NAME", "FORMAT", "ARCHITECTURE", "QUANT", "SIZE", "FILES",
                        "RUNTIMES");
                for (CatalogueModel model : models) {
                    out.printf(Locale.ROOT, "%-28s %-5s %-14s %-10s %10s %5d  %s%n", model.name(), model.format(), model.architecture(),
                            model.quantization(), MemoryFit.gib(model.totalBytes()), model.files().size(), String.join(",", model.runtimes()));
                }
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "One model: files, sizes, SHA-256, format, runtimes, source.",
            exitCodeListHeading = "%nExit codes:%n", exitCodeList = {"0:shown", "2:no such model"})
    static class Show implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "NAME")
        String name;

        @Mixin
        JsonOption json;

        @Inject
        ModelCatalogue catalogue;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            CatalogueModel model = catalogue.find(name).orElseThrow(() -> new ModelRefused(ModelRefused.Reason.NOT_FOUND,
                    "no model " + name + " in the catalogue (macfleet model list)"));
            if (json.on()) {
                out.println(Json.write(model));
            } else {
                out.println(describe(model));
                out.println("  source:   " + model.source());
                out.println("  stored:   " + catalogue.heldOn(model.name()).map(mac -> "on " + mac + " (model add --via), not on this host")
                        .orElse(catalogue.directory(model.name()).toString()));
                out.println("  runtimes: " + String.join(", ", model.runtimes()));
                for (ModelFile file : model.files()) {
                    out.printf(Locale.ROOT, "  %s  %14d  %s%n", file.sha256(), file.size(), file.path());
                }
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, description = "Remove a model from the catalogue and its files from this host.",
            exitCodeListHeading = "%nExit codes:%n", exitCodeList = {"0:removed", "2:no such model"})
    static class Remove implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "NAME")
        String name;

        @Mixin
        ActorOption actor;

        @Inject
        ModelCatalogue catalogue;

        @Override
        public Integer call() {
            if (!catalogue.remove(name, actor.name())) {
                throw new ModelRefused(ModelRefused.Reason.NOT_FOUND, "no model " + name + " in the catalogue (macfleet model list)");
            }
            spec.commandLine().getOut().println("removed " + name);
            spec.commandLine().getOut().flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "fit", mixinStandardHelpOptions = true,
            description = "Whether model NAME fits the Macs of CLUSTER: per Mac, weights share by memory + KV cache for the context and"
                    + " slots, against the memory its GPU may use (iogpu.wired_limit_mb, else macOS's default 75%).",
            exitCodeListHeading = "%nExit codes:%n", exitCodeList = {"0:fits", "1:does not fit", "2:unknown cluster or model"})
    static class Fit implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "CLUSTER")
        String cluster;

        @Parameters(index = "1", paramLabel = "NAME")
        String name;

        @Option(names = "--context", paramLabel = "TOKENS", description = "Context per slot (default: inference.settings.context, else 4096).")
        Integer context;

        @Option(names = "--slots", paramLabel = "N", description = "Parallel sequences (default: inference.settings.parallel, else 1).")
        Integer slots;

        @Mixin
        JsonOption json;

        @Inject
        ModelFits fits;

        @Override
        public Integer call() {
            MemoryFit.Result result = fits.fit(cluster, name, Optional.ofNullable(context), Optional.ofNullable(slots));
            PrintWriter out = spec.commandLine().getOut();
            out.println(json.on() ? Json.write(result) : result.message());
            out.flush();
            if (!result.fits()) {
                throw CommandException.reported(CommandFailure.Kind.CHECK_FAILED);
            }
            return ExitCodes.OK;
        }
    }

    static String describe(CatalogueModel model) {
        return String.format(Locale.ROOT, "%s: %s %s %s, %d file(s), %s", model.name(), model.format(), model.architecture(),
                model.quantization(), model.files().size(), MemoryFit.gib(model.totalBytes()));
    }

    /** One line per file each time it passes another tenth. */
    static final class ProgressBar implements HuggingFaceHub.Progress {
        private final PrintWriter out;
        private String file;
        private int tenth = -1;

        ProgressBar(PrintWriter out) {
            this.out = out;
        }

        @Override
        public void transferred(String path, long done, long total) {
            int now = total == 0 ? 10 : (int) (done * 10 / total);
            if (!path.equals(file) || now != tenth) {
                file = path;
                tenth = now;
                out.printf(Locale.ROOT, "  %-40s [%-10s] %3d%%  %s of %s%n", path, "#".repeat(now), now * 10, MemoryFit.gib(done),
                        MemoryFit.gib(total));
                out.flush();
            }
        }
    }
}
