package io.macfleet.provision;

import io.macfleet.ssh.CommandResult;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * {@code type: template}: renders a file from a template (inline {@code content}, or {@code file} next to the
 * playbook) with placeholders from the inventory, the facts and {@code vars}, installs it with SFTP and runs the
 * {@code afterChange} commands. Already done when the file on the machine equals the rendered text. With
 * {@code privileged} (files under /etc and other system paths, which only root may write on a Mac) the file is
 * uploaded to /tmp and moved into place with {@code sudo -n /usr/bin/install -m MODE -o OWNER -g GROUP}.
 */
final class TemplateStep implements StepDefinition {

    /** The step type {@code template}. */
    @jakarta.inject.Singleton
    static final class Type extends SimpleStepType<Parameters> {
        Type() {
            super("template", Parameters.class, (parameters, files) -> new TemplateStep(parameters,
                    parameters.content() != null ? parameters.content() : files.text(parameters.file())));
        }
    }

    record Parameters(String path, String content, String file, String mode, Map<String, Object> vars, List<CommandSpec> afterChange,
                      boolean privileged, String owner, String group) {
        Parameters {
            if (path == null || !path.startsWith("/") || path.contains("..") || path.contains("{{")) {
                throw new IllegalArgumentException("'path' is required: the absolute path of the file on the machine (no '..', no placeholders)");
            }
            if ((content == null) == (file == null)) {
                throw new IllegalArgumentException("give exactly one of 'content' (the template inline) or 'file' (a template file next to the playbook)");
            }
            if (content != null) {
                Templates.validate(content);
            }
            mode = mode == null ? "0644" : mode;
            if (!mode.matches("0?[0-7]{3}")) {
                throw new IllegalArgumentException("mode must be octal like \"0644\", was " + mode);
            }
            vars = vars == null ? Map.of() : Map.copyOf(vars);
            afterChange = afterChange == null ? List.of() : List.copyOf(afterChange);
            owner = owner == null ? (privileged ? "root" : null) : owner;
            group = group == null ? (privileged ? "wheel" : null) : group;
            if (!privileged && (owner != null || group != null)) {
                throw new IllegalArgumentException("owner and group need privileged: true (only root can give a file away)");
            }
            for (String name : java.util.Arrays.asList(owner, group)) {
                if (name != null && !name.matches("[a-z_][a-z0-9_-]*")) {
                    throw new IllegalArgumentException("owner/group must be a user or group name, was " + name);
                }
            }
        }

        int modeBits() {
            return Integer.parseInt(mode, 8);
        }
    }

    private final Parameters parameters;
    private final String template;

    TemplateStep(Parameters parameters, String template) {
        Templates.validate(template);
        this.parameters = parameters;
        this.template = template;
    }

    private String rendered(MachineContext context) {
        Templates.Rendered rendered = Templates.render(template, context.variables(parameters.vars()));
        if (rendered.secret()) {
            throw new StepFailedException("a template file cannot hold a {{ secret ... }}: the file would keep it on the machine in the clear");
        }
        return rendered.text();
    }

    @Override
    public CheckResult check(MachineContext context) {
        String wanted = rendered(context);
        CommandResult current = context.execute(new CommandSpec(List.of("cat", parameters.path()), false, null), true, false);
        if (current.exitStatus() == null || current.exitStatus() != 0) {
            return CheckResult.notSatisfied(parameters.path() + " is missing");
        }
        return current.stdout().equals(wanted)
                ? CheckResult.satisfied(parameters.path() + " is up to date")
                : CheckResult.notSatisfied(parameters.path() + " differs from the template");
    }

    @Override
    public boolean hasAction() {
        return true;
    }

    @Override
    public String act(MachineContext context) {
        byte[] content = rendered(context).getBytes(StandardCharsets.UTF_8);
        if (parameters.privileged()) {
            String staging = "/tmp/macfleet-" + PlaybookLoader.sha256(parameters.path()).substring(0, 12) + "-" + parameters.path().substring(parameters.path().lastIndexOf('/') + 1);
            context.upload(staging, content, 0600);
            CommandResult installed = context.execute(new CommandSpec(List.of("/usr/bin/install", "-m", parameters.mode(), "-o", parameters.owner(),
                    "-g", parameters.group(), staging, parameters.path()), true, null), false, false);
            if (!installed.succeeded()) {
                throw new StepFailedException("`" + installed.command().display() + "` exited with " + installed.exitStatus() + ": " + installed.stderr().strip());
            }
            context.execute(new CommandSpec(List.of("rm", "-f", staging), false, null), false, false);
        } else {
            context.upload(parameters.path(), content, parameters.modeBits());
        }
        StringBuilder summary = new StringBuilder("installed " + parameters.path() + " (" + content.length + " bytes)");
        for (CommandSpec command : parameters.afterChange()) {
            CommandResult result = context.execute(command, false, false);
            if (!result.succeeded()) {
                throw new StepFailedException(context.redact("installed " + parameters.path() + ", then `" + result.command().display()
                        + "` exited with " + result.exitStatus() + ": " + result.stderr().strip()));
            }
            summary.append("; `").append(result.command().display()).append("` ok");
        }
        return summary.toString();
    }
}
