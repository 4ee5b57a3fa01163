package io.macfleet.console;

import java.util.Comparator;
import java.util.List;

/** One machine of the overview with its status columns. */
public record MachineRow(String name, String cluster, String address, String role, Status reachable, Status macos,
                         Status rdma, Status cabling, Status drift, Status provisioning, Status inference) {

    /** Machines with problems on top (most problems first), then by cluster and name. */
    public static final Comparator<MachineRow> PROBLEMS_FIRST = Comparator.comparing((MachineRow row) -> -row.problemCount())
            .thenComparing(row -> row.cluster() == null ? "\uffff" : row.cluster())
            .thenComparing(MachineRow::name);

    public List<Status> statuses() {
        return List.of(reachable, macos, rdma, cabling, drift, provisioning, inference);
    }

    public long problemCount() {
        return statuses().stream().filter(Status::isProblem).count();
    }

    public boolean problem() {
        return problemCount() > 0;
    }
}
