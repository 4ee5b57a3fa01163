package io.macfleet.runtime;

import io.macfleet.runtime.RuntimePlan.DaemonPlan;
import io.macfleet.runtime.RuntimePlan.MachinePlan;
import io.macfleet.runtime.RuntimePlan.StagedFile;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** A {@link RuntimePlan} for people (text) and for scripts (typed JSON body: {@code node plan --json}). */
public final class RuntimePlans {

    private RuntimePlans() {
    }

    /** {@code node plan --json}: one object per Mac. */
    public record PlanBody(String cluster, String runtime, String build, String endpoint, String health, List<String> notes,
                           List<MachineBody> machines) {
    }

    public record MachineBody(String machine, int rank, String role, List<String> directories, List<FileBody> files, List<DaemonBody> daemons,
                              List<WrittenFile> writtenFiles) {
    }

    /** A small file the deployment writes from text (MLX's device or host file), shown as it will be on the Mac. */
    public record WrittenFile(String path, String content) {
    }

    /** {@code source}: a local path, or the secret's reference (never its value); {@code sha256} null for a secret. */
    public record FileBody(String destination, String source, String sha256, long size, String mode) {
    }

    public record DaemonBody(String label, String plist, int startOrder, List<String> programArguments, Map<String, String> environment,
                             List<String> listens, String readiness, String standardOutPath, String standardErrorPath) {
    }

    public static PlanBody body(RuntimePlan plan) {
        return new PlanBody(plan.cluster(), plan.runtime(), plan.build(), plan.endpoint(), plan.health().toString(), plan.notes(),
                plan.machines().stream().map(RuntimePlans::machine).toList());
    }

    private static MachineBody machine(MachinePlan machine) {
        return new MachineBody(machine.machine(), machine.rank(), machine.role(), machine.directories(),
                machine.files().stream().map(file -> new FileBody(file.destination(), source(file), file.sha256().orElse(null), file.size(),
                        "0" + Integer.toOctalString(file.mode()))).toList(),
                machine.daemons().stream().map(RuntimePlans::daemon).toList(),
                machine.files().stream().filter(file -> file.source() instanceof StagedFile.Source.Content)
                        .map(file -> new WrittenFile(file.destination(), ((StagedFile.Source.Content) file.source()).text())).toList());
    }

    private static DaemonBody daemon(DaemonPlan daemon) {
        return new DaemonBody(daemon.daemon().label(), daemon.daemon().plistPath(), daemon.startOrder(), daemon.daemon().programArguments(),
                daemon.daemon().sortedEnvironment(), daemon.listens().stream().map(RuntimePlan.Listen::toString).toList(),
                daemon.readiness().toString(), daemon.daemon().standardOutPath(), daemon.daemon().standardErrorPath());
    }

    private static String source(StagedFile file) {
        return switch (file.source()) {
            case StagedFile.Source.LocalFile local -> local.path().toString();
            case StagedFile.Source.Secret secret -> "secret " + secret.reference();
            case StagedFile.Source.Content content -> "written from the plan (" + content.text().length() + " characters)";
        };
    }

    /** The plan as text, nothing changed. */
    public static String text(RuntimePlan plan) {
        StringBuilder text = new StringBuilder();
        text.append("Plan for cluster ").append(plan.cluster()).append(": runtime ").append(plan.runtime()).append(", ").append(plan.build())
                .append(" (nothing changed)\n");
        for (MachinePlan machine : plan.machines()) {
            text.append(String.format(Locale.ROOT, "%n  %s (rank %d, %s)%n", machine.machine(), machine.rank(), machine.role()));
            for (StagedFile file : machine.files()) {
                text.append(String.format(Locale.ROOT, "    copy   %-64s %s  %s%n", file.destination(),
                        file.sha256().map(hash -> "sha256 " + hash.substring(0, 12)).orElse("(secret)"),
                        file.size() < 0 ? source(file) : human(file.size())));
            }
            for (DaemonPlan daemon : machine.daemons()) {
                text.append("    daemon ").append(daemon.daemon().plistPath()).append(" (start order ").append(daemon.startOrder()).append(")\n");
                text.append("      argv   ").append(String.join(" ", daemon.daemon().programArguments())).append('\n');
                daemon.daemon().sortedEnvironment().forEach((name, value) -> text.append("      env    ").append(name).append('=').append(value).append('\n'));
                text.append("      listen ").append(daemon.listens().stream().map(RuntimePlan.Listen::toString).toList()).append('\n');
                text.append("      ready  ").append(daemon.readiness()).append('\n');
                text.append("      logs   ").append(daemon.daemon().standardErrorPath()).append('\n');
            }
        }
        text.append('\n');
        plan.notes().forEach(note -> text.append("  ").append(note).append('\n'));
        text.append("  endpoint: ").append(plan.endpoint()).append('\n');
        return text.toString();
    }

    static String human(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double value = bytes;
        int unit = -1;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }
}
