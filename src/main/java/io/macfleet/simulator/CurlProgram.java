package io.macfleet.simulator;

import io.macfleet.simulator.MacShell.Result;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;

/**
 * curl ({@code /usr/bin/curl}), the options a deployment uses, fetching over real HTTP into the Mac's files:
 * {@code -f/--fail}, {@code -s/--silent}, {@code -S/--show-error}, {@code -L/--location}, {@code -C/--continue-at
 * -|OFFSET} (a {@code Range} request; appends a 206 answer, refuses a 200 one as curl does), {@code -o/--output FILE}
 * (else the body goes to standard output), {@code -H/--header "Name: value"}, {@code -K/--config FILE|-} (curl's config
 * syntax, {@code header = "..."} and {@code url = "..."} lines; {@code -} reads standard input, which keeps a secret header
 * out of argv) and one URL. As curl does since 7.58, a redirect to another host, port or scheme drops the
 * {@code Authorization} header. Exit codes and messages are curl's, as curl 7.88.1 gave them
 * against a small test server (macOS 26 ships curl 8, whose messages for these cases read the same): 2 unknown
 * option or no URL, 3 bad URL, 6 unknown host, 7 connection refused, 18 body cut short, 22 an HTTP error under
 * {@code --fail} (nothing written; also 416 for a resume past the end), 23 the output cannot be written, 33 no
 * byte ranges for a resume. The progress meter curl draws without {@code --silent} is left out.
 */
final class CurlProgram implements SimulatedProgram {

    /** A config file line: {@code [--]name[ =:]value}, the value maybe in double quotes. */
    private static final java.util.regex.Pattern CONFIG_LINE = java.util.regex.Pattern.compile("-{0,2}([A-Za-z-]+)\\s*[=:]?\\s*(.+)");
    private static final String TRY_HELP = "curl: try 'curl --help' or 'curl --manual' for more information\n";

    @Override
    public List<String> names() {
        return List.of("curl");
    }

    @Override
    public Result run(Call call) {
        boolean fail = false;
        boolean silent = false;
        boolean showError = false;
        boolean location = false;
        String continueAt = null;
        String output = null;
        String url = null;
        List<String> headers = new java.util.ArrayList<>();
        List<String> args = call.arguments();
        for (int index = 0; index < args.size(); index++) {
            String argument = args.get(index);
            List<String> flags = argument.startsWith("--") || !argument.startsWith("-") || argument.length() < 2
                    ? List.of(argument)
                    : argument.substring(1).chars().mapToObj(letter -> "-" + (char) letter).toList();
            for (String flag : flags) {
                switch (flag) {
                    case "-f", "--fail" -> fail = true;
                    case "-s", "--silent" -> silent = true;
                    case "-S", "--show-error" -> showError = true;
                    case "-L", "--location" -> location = true;
                    case "-C", "--continue-at", "-o", "--output", "-H", "--header", "-K", "--config" -> {
                        if (index + 1 >= args.size()) {
                            return Result.fail(2, "curl: option " + flag + ": requires parameter\n" + TRY_HELP);
                        }
                        String value = args.get(++index);
                        if (flag.equals("-C") || flag.equals("--continue-at")) {
                            continueAt = value;
                        } else if (flag.equals("-H") || flag.equals("--header")) {
                            headers.add(value);
                        } else if (flag.equals("-K") || flag.equals("--config")) {
                            List<String> lines = new java.util.ArrayList<>();
                            if (value.equals("-")) {
                                for (String line = call.stdinLine().get(); line != null; line = call.stdinLine().get()) {
                                    lines.add(line);
                                }
                            } else {
                                try {
                                    lines = Files.readAllLines(call.mac().resolve(value));
                                } catch (IOException e) {
                                    return Result.fail(26, "curl: cannot read config from '" + value + "'\n");
                                }
                            }
                            for (String line : lines) {
                                String text = line.strip();
                                if (text.isEmpty() || text.startsWith("#")) {
                                    continue;
                                }
                                java.util.regex.Matcher option = CONFIG_LINE.matcher(text);
                                if (!option.matches()) {
                                    return Result.fail(2, "curl: config: cannot read the line '" + text + "'\n");
                                }
                                String configValue = option.group(2).startsWith("\"") && option.group(2).endsWith("\"") && option.group(2).length() >= 2
                                        ? option.group(2).substring(1, option.group(2).length() - 1).replace("\\\"", "\"") : option.group(2);
                                switch (option.group(1)) {
                                    case "header", "H" -> headers.add(configValue);
                                    case "url" -> url = configValue;
                                    default -> {
                                        return Result.fail(2, "curl: config: option " + option.group(1) + " is not simulated\n");
                                    }
                                }
                            }
                        } else {
                            output = value;
                        }
                    }
                    default -> {
                        if (flag.startsWith("-") && flag.length() > 1) {
                            return Result.fail(2, "curl: option " + flag + ": is unknown\n" + TRY_HELP);
                        }
                        if (url != null) {
                            return Result.fail(2, "curl: the simulated curl fetches one URL per call, got " + url + " and " + flag + "\n");
                        }
                        url = flag;
                    }
                }
            }
        }
        if (url == null) {
            return Result.fail(2, "curl: no URL specified!\n" + TRY_HELP);
        }
        boolean errors = !silent || showError;
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            return error(errors, 3, "URL using bad/illegal format or missing URL");
        }
        if (uri.getScheme() == null || uri.getHost() == null) {
            return error(errors, 3, "URL using bad/illegal format or missing URL");
        }
        if (!uri.getScheme().equals("http") && !uri.getScheme().equals("https")) {
            return error(errors, 1, "Protocol \"" + uri.getScheme() + "\" not supported or disabled in libcurl");
        }
        Path file = output == null ? null : call.mac().resolve(output);
        long offset = 0;
        if (continueAt != null) {
            if (continueAt.equals("-")) {
                offset = file != null && Files.isRegularFile(file) ? size(file) : 0;
            } else if (continueAt.matches("[0-9]+")) {
                offset = Long.parseLong(continueAt);
            } else {
                return Result.fail(2, "curl: option -C: expected a proper numerical parameter\n" + TRY_HELP);
            }
        }
        return fetch(uri, location, fail, offset, file, errors, headers);
    }

    private static Result fetch(URI uri, boolean location, boolean fail, long offset, Path file, boolean errors, List<String> headers) {
        int port = uri.getPort() >= 0 ? uri.getPort() : uri.getScheme().equals("https") ? 443 : 80;
        long start = System.nanoTime();
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).followRedirects(HttpClient.Redirect.NEVER).build()) {
            HttpResponse<InputStream> response;
            URI target = uri;
            try {
                for (int hops = 0; ; hops++) {
                    HttpRequest.Builder request = HttpRequest.newBuilder(target).GET().header("User-Agent", "curl/8.7.1").header("Accept", "*/*");
                    boolean sameOrigin = target.getScheme().equals(uri.getScheme()) && target.getHost().equalsIgnoreCase(uri.getHost())
                            && target.getPort() == uri.getPort();
                    for (String header : headers) {
                        int colon = header.indexOf(':');
                        if (colon > 0 && (sameOrigin || !header.substring(0, colon).strip().equalsIgnoreCase("Authorization"))) {
                            request.header(header.substring(0, colon).strip(), header.substring(colon + 1).strip());
                        }
                    }
                    if (offset > 0) {
                        request.header("Range", "bytes=" + offset + "-");
                    }
                    response = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
                    int status = response.statusCode();
                    java.util.Optional<String> next = response.headers().firstValue("Location");
                    if (!location || status < 300 || status >= 400 || next.isEmpty()) {
                        break;
                    }
                    response.body().close();
                    if (hops >= 50) {
                        return error(errors, 47, "Maximum (50) redirects followed");
                    }
                    target = target.resolve(next.get());
                }
            } catch (ConnectException e) {
                return error(errors, 7, "Failed to connect to " + uri.getHost() + " port " + port + " after "
                        + (System.nanoTime() - start) / 1_000_000 + " ms: Couldn't connect to server");
            } catch (IOException e) {
                if (e.getCause() instanceof UnknownHostException || e instanceof java.net.http.HttpConnectTimeoutException) {
                    return e instanceof java.net.http.HttpConnectTimeoutException
                            ? error(errors, 28, "Failed to connect to " + uri.getHost() + " port " + port + " after "
                            + (System.nanoTime() - start) / 1_000_000 + " ms: Timeout was reached")
                            : error(errors, 6, "Could not resolve host: " + uri.getHost());
                }
                return error(errors, 56, "Recv failure: " + (e.getMessage() == null ? "Connection reset by peer" : e.getMessage()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Result.fail(130, "");
            }
            try (InputStream body = response.body()) {
                int status = response.statusCode();
                if (fail && status >= 400) {
                    return error(errors, 22, "The requested URL returned error: " + status);
                }
                boolean append = false;
                if (offset > 0 && status >= 200 && status < 300) {
                    if (status != 206 || !response.headers().firstValue("Content-Range").orElse("").startsWith("bytes " + offset + "-")) {
                        return error(errors, 33, "HTTP server doesn't seem to support byte ranges. Cannot resume.");
                    }
                    append = true;
                }
                OptionalLong expected = response.headers().firstValueAsLong("Content-Length");
                return file == null ? toStandardOutput(body, expected, errors) : toFile(body, expected, file, append, errors);
            }
        } catch (IOException e) {
            return error(errors, 56, "Recv failure: " + e.getMessage());
        }
    }

    private static Result toFile(InputStream body, OptionalLong expected, Path file, boolean append, boolean errors) {
        OutputStream out;
        try {
            out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            return error(errors, 23, "Failure writing output to destination");
        }
        long received = 0;
        try (out) {
            byte[] buffer = new byte[1 << 16];
            while (true) {
                int count;
                try {
                    count = body.read(buffer);
                } catch (IOException cut) {
                    break;
                }
                if (count < 0) {
                    break;
                }
                out.write(buffer, 0, count);
                received += count;
            }
        } catch (IOException e) {
            return error(errors, 23, "Failure writing output to destination");
        }
        if (expected.isPresent() && received < expected.getAsLong()) {
            return error(errors, 18, "transfer closed with " + (expected.getAsLong() - received) + " bytes remaining to read");
        }
        return Result.ok("");
    }

    private static Result toStandardOutput(InputStream body, OptionalLong expected, boolean errors) throws IOException {
        byte[] bytes;
        try {
            bytes = body.readAllBytes();
        } catch (IOException cut) {
            return error(errors, 18, "transfer closed with outstanding read data remaining");
        }
        if (expected.isPresent() && bytes.length < expected.getAsLong()) {
            return new Result(new String(bytes, StandardCharsets.UTF_8), errors ? "curl: (18) transfer closed with "
                    + (expected.getAsLong() - bytes.length) + " bytes remaining to read\n" : "", 18, null);
        }
        return Result.ok(new String(bytes, StandardCharsets.UTF_8));
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    private static Result error(boolean shown, int code, String message) {
        return Result.fail(code, shown ? "curl: (" + code + ") " + message + "\n" : "");
    }
}
