package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * shasum ({@code /usr/bin/shasum} on macOS): {@code shasum -a 1|256|512 FILE...}, answered as macOS does, one
 * {@code <hex>  <path>} line per file; a missing file is reported on stderr with exit status 1. Files are hashed
 * as streams, so model-sized files cost no memory.
 */
final class ShasumProgram implements SimulatedProgram {

    @Override
    public List<String> names() {
        return List.of("shasum");
    }

    @Override
    public Result run(Call call) {
        List<String> args = call.arguments();
        String algorithm = "SHA-1";
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        int exit = 0;
        for (int index = 0; index < args.size(); index++) {
            String argument = args.get(index);
            if (argument.equals("-a")) {
                if (index + 1 >= args.size()) {
                    return Result.fail(1, "Option a requires an argument\n");
                }
                algorithm = switch (args.get(++index)) {
                    case "1" -> "SHA-1";
                    case "256" -> "SHA-256";
                    case "512" -> "SHA-512";
                    default -> null;
                };
                if (algorithm == null) {
                    return Result.fail(1, "shasum: Unrecognized algorithm\n");
                }
                continue;
            }
            Path file = call.mac().resolve(argument);
            if (!Files.isRegularFile(file)) {
                err.append("shasum: ").append(argument).append(": No such file or directory\n");
                exit = 1;
                continue;
            }
            try {
                out.append(digest(file, algorithm)).append("  ").append(argument).append('\n');
            } catch (IOException e) {
                err.append("shasum: ").append(argument).append(": ").append(e.getMessage()).append('\n');
                exit = 1;
            }
        }
        return new Result(out.toString(), err.toString(), exit, null);
    }

    private static String digest(Path file, String algorithm) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has " + algorithm, e);
        }
        byte[] buffer = new byte[1 << 20];
        try (InputStream in = Files.newInputStream(file)) {
            int count;
            while ((count = in.read(buffer)) >= 0) {
                digest.update(buffer, 0, count);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }
}
