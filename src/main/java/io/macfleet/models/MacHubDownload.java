package io.macfleet.models;

import io.macfleet.ssh.Command;
import io.macfleet.ssh.CommandResult;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.MachineSession;
import io.macfleet.ssh.PrivilegedProgram;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * {@code model add NAME hf:... --via MACHINE}: the files come down once on that Mac instead of the control host. The
 * control host asks the hub what to fetch ({@link HuggingFaceHub#plan}: commit, sizes, SHA-256, the CDN location); the
 * Mac fetches each file with macOS's own curl into {@code FILE.partial} in the SSH user's staging directory (mode 700),
 * resuming with {@code --continue-at -}, checks it with its own {@code shasum -a 256} and renames it only when equal.
 * The hub token, when the location is the hub's own origin, reaches curl as a config file on standard input
 * ({@code --config -}), never in argv or a file. The format is read from the first bytes of each file, fetched back
 * over SFTP into a local sketch directory and given to {@link ModelInspection}, the same reader a local add uses.
 */
public final class MacHubDownload {

    /** Where the Mac keeps downloads until they are complete and verified (resumed from there). */
    public static final String DOWNLOADS = ModelLayout.STAGING_DIRECTORY + "/downloads";
    /** Enough for a GGUF header with its tokenizer arrays (a 150k-token vocabulary and its merges stay below this). */
    static final long HEADER_BYTES = 64L << 20;
    private static final ExecutionLimits DOWNLOAD_LIMITS = ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofHours(12));

    /**
     * What lies on the Mac, verified and installed root:wheel 644 where a placement puts it ({@code installed}: each
     * file's path on the Mac, in {@code files} order).
     */
    public record Result(String machine, String commit, List<ModelFile> files, List<String> installed, ModelInspection inspection) {
    }

    private MacHubDownload() {
    }

    /**
     * Downloads {@code plan}'s files on the Mac under {@code DOWNLOADS/NAME}, verified; a failure names the Mac and the
     * file, and leaves a {@code .partial} only when it can be resumed (a wrong hash removes it).
     */
    public static Result download(MachineSession mac, String name, HuggingFaceHub.Plan plan, Optional<String> token, Path sketch,
                                  HuggingFaceHub.Progress progress) {
        String machine = mac.target().machine();
        String user = mac.target().user();
        String directory = DOWNLOADS + "/" + name;
        require(mac.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", user, "-m", "700", ModelLayout.STAGING_DIRECTORY)), machine,
                "cannot create " + ModelLayout.STAGING_DIRECTORY);
        List<ModelFile> files = new ArrayList<>();
        for (HuggingFaceHub.PlannedFile file : plan.files()) {
            String target = directory + "/" + file.path();
            require(mac.execute(Command.of("mkdir", "-p", target.substring(0, target.lastIndexOf('/')))), machine, "cannot create the directory of " + target);
            files.add(one(mac, machine, file, target, token, progress));
        }
        try {
            Files.createDirectories(sketch);
            for (ModelFile file : files) {
                Path local = sketch.resolve(file.path()).normalize();
                Files.createDirectories(local.getParent());
                long bytes = file.path().endsWith(".json") ? file.size() : Math.min(file.size(), HEADER_BYTES);
                byte[] head = mac.withSftp("read the first bytes of " + directory + "/" + file.path(), sftp -> {
                    try (var remote = sftp.open(directory + "/" + file.path())) {
                        byte[] buffer = new byte[(int) bytes];
                        int done = 0;
                        while (done < buffer.length) {
                            int read = remote.read(done, buffer, done, buffer.length - done);
                            if (read < 0) {
                                break;
                            }
                            done += read;
                        }
                        return java.util.Arrays.copyOf(buffer, done);
                    }
                });
                Files.write(local, head);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot keep the headers read from " + machine + " under " + sketch, e);
        }
        ModelInspection inspection = ModelInspection.of(sketch, files.stream().map(ModelFile::path).toList());
        List<String> installed = new ArrayList<>();
        for (ModelFile file : files) {
            String path = installedPath(name, files.size(), file);
            require(mac.execute(Command.sudo(PrivilegedProgram.INSTALL, "-d", "-o", "root", "-g", "wheel", "-m", "755",
                    path.substring(0, path.lastIndexOf('/')))), machine, "cannot create the directory of " + path);
            require(mac.execute(Command.sudo(PrivilegedProgram.INSTALL, "-o", "root", "-g", "wheel", "-m", "644", directory + "/" + file.path(), path)),
                    machine, "cannot install " + path);
            installed.add(path);
        }
        mac.execute(Command.of("rm", "-rf", directory));
        return new Result(machine, plan.commit(), files, installed, inspection);
    }

    /**
     * Where a placement puts the file (the rule of {@code placement.PlacedFile.of}): a model of one file where
     * {@code node deploy} looks for it, the files of a model of several under the model's name; so a placement or deploy
     * finds it on this Mac and sends it nothing.
     */
    static String installedPath(String name, int fileCount, ModelFile file) {
        String base = file.path().substring(file.path().lastIndexOf('/') + 1);
        return fileCount == 1 ? ModelLayout.singleFile(file.sha256(), base) : ModelLayout.DIRECTORY + "/" + name + "/" + file.path();
    }

    private static ModelFile one(MachineSession mac, String machine, HuggingFaceHub.PlannedFile file, String target, Optional<String> token,
                                 HuggingFaceHub.Progress progress) {
        String where = file.name() + " on " + machine;
        String partial = target + ".partial";
        long size = stat(mac, target);
        if (size == file.size()) {
            String existing = shasum(mac, machine, target);
            if (file.sha256().map(existing::equals).orElseGet(() -> gitBlobSha1(mac, target).equals(file.gitSha1().orElseThrow()))) {
                progress.transferred(file.path(), size, size);
                return new ModelFile(file.path(), size, existing);
            }
        }
        long have = stat(mac, partial);
        if (have > file.size()) {
            require(mac.execute(Command.of("rm", "-f", partial)), machine, "cannot remove the oversized " + partial);
            have = 0;
        }
        if (have < file.size()) {
            progress.transferred(file.path(), Math.max(have, 0), file.size());
            StringBuilder config = new StringBuilder();
            if (token.isPresent() && file.hubOrigin()) {
                // On standard input, so the token is neither in argv (ps shows it) nor in a file left behind.
                config.append("header = \"Authorization: Bearer ").append(token.get().replace("\"", "\\\"")).append("\"\n");
            }
            CommandResult curl = mac.execute(Command.builder("curl").arguments("--fail", "--silent", "--show-error", "--location",
                    "--continue-at", "-", "--output", partial, "--config", "-", file.location().toString()).standardInput(config.toString()).build(),
                    DOWNLOAD_LIMITS);
            if (!curl.succeeded()) {
                throw new ModelRefused(curl.exitStatus() != null && curl.exitStatus() == 22 && curl.stderr().contains("404")
                        ? ModelRefused.Reason.NOT_FOUND : ModelRefused.Reason.DOWNLOAD_FAILED, where + ": curl failed (exit " + curl.exitStatus()
                        + "): " + curl.stderr().strip() + advice(curl) + (stat(mac, partial) > 0 ? "; " + partial
                        + " is kept and the next add resumes it" : ""));
            }
            have = stat(mac, partial);
        }
        if (have != file.size()) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, where + ": the download ended after " + have + " of " + file.size()
                    + " bytes (kept as " + partial + "; the next add resumes it)");
        }
        String actual = shasum(mac, machine, partial);
        boolean verified = file.sha256().isPresent() ? file.sha256().get().equals(actual) : gitBlobSha1(mac, partial).equals(file.gitSha1().orElseThrow());
        if (!verified) {
            mac.execute(Command.of("rm", "-f", partial));
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, where + ": SHA-256 mismatch: the hub publishes "
                    + file.sha256().orElse("git blob " + file.gitSha1().orElse("")) + ", the bytes received hash to " + actual
                    + " (shasum -a 256 on " + machine + "); the file was removed");
        }
        require(mac.execute(Command.of("mv", "-f", partial, target)), machine, "cannot rename " + partial + " into place");
        progress.transferred(file.path(), file.size(), file.size());
        return new ModelFile(file.path(), file.size(), actual);
    }

    private static String advice(CommandResult curl) {
        String error = curl.stderr();
        if (error.contains("error: 401") || error.contains("error: 403")) {
            return " (the hub refused access: a gated or private repository needs a token, macfleet.models.hub-token or --hub-token env:NAME)";
        }
        if (error.contains("error: 404")) {
            return " (not found on the hub)";
        }
        return Integer.valueOf(7).equals(curl.exitStatus()) || Integer.valueOf(6).equals(curl.exitStatus()) || Integer.valueOf(28).equals(curl.exitStatus())
                ? " (the Mac cannot reach the hub)" : "";
    }

    /** The size of a file on the Mac, -1 when there is none. */
    private static long stat(MachineSession mac, String path) {
        return mac.withSftp("stat " + path, sftp -> {
            var attributes = sftp.statExistence(path);
            return attributes == null ? -1L : attributes.getSize();
        });
    }

    private static String shasum(MachineSession mac, String machine, String path) {
        CommandResult sum = mac.execute(Command.reading("shasum", "-a", "256", path), DOWNLOAD_LIMITS);
        String hex = sum.stdout().strip().split("\\s+")[0];
        if (!sum.succeeded() || !hex.matches("[0-9a-f]{64}")) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, "cannot hash " + machine + ":" + path + " with `shasum -a 256` (exit "
                    + sum.exitStatus() + "): " + sum.stderr().strip());
        }
        return hex;
    }

    /**
     * Git's blob id of a small (non-LFS) file, which is all the hub publishes for it: its bytes are read back (such
     * files are the config and tokenizer, kilobytes to a few megabytes) and hashed here.
     */
    private static String gitBlobSha1(MachineSession mac, String path) {
        byte[] bytes = mac.withSftp("read " + path, sftp -> {
            try (var remote = sftp.open(path)) {
                byte[] buffer = new byte[(int) remote.length()];
                int done = 0;
                while (done < buffer.length) {
                    int read = remote.read(done, buffer, done, buffer.length - done);
                    if (read < 0) {
                        break;
                    }
                    done += read;
                }
                return buffer;
            }
        });
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            digest.update(("blob " + bytes.length + "\0").getBytes(StandardCharsets.US_ASCII));
            digest.update(bytes);
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void require(CommandResult result, String machine, String what) {
        if (!result.succeeded()) {
            throw new ModelRefused(ModelRefused.Reason.DOWNLOAD_FAILED, machine + ": " + what + " (exit " + result.exitStatus() + "): "
                    + result.stderr().strip());
        }
    }
}
