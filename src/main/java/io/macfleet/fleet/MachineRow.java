package io.macfleet.fleet;

import java.util.Comparator;
import java.util.List;

/**
 * One machine of the overview with a cell per status column.
 *
 * @param cells in the order of the columns ({@link FleetStatus.Fleet#columns()})
 */
public record MachineRow(String name, String cluster, String address, String role, List<Cell> cells) {

    /** Machines with problems on top (most problems first), then by cluster and name. */
    public static final Comparator<MachineRow> PROBLEMS_FIRST = Comparator.comparing((MachineRow row) -> -row.problemCount())
            .thenComparing(row -> row.cluster() == null ? "\uffff" : row.cluster())
            .thenComparing(MachineRow::name);

    public MachineRow {
        cells = List.copyOf(cells);
    }

    /**
     * One cell: the column's table heading and machine-page title, and the status.
     */
    public record Cell(String column, String title, Status status, boolean blocksReadiness) {
        public Cell(String column, String title, Status status) {
            this(column, title, status, status.isProblem());
        }
    }

    public List<Status> statuses() {
        return cells.stream().map(Cell::status).toList();
    }

    /** The cell of the column with this heading, if there is such a column. */
    public java.util.Optional<Status> status(String column) {
        return cells.stream().filter(cell -> cell.column().equals(column)).map(Cell::status).findFirst();
    }

    public long problemCount() {
        return cells.stream().filter(cell -> cell.status().isProblem()).count();
    }

    public boolean problem() {
        return problemCount() > 0;
    }

    /**
     * The one notion of a ready machine, used by the overview counts and filter, the cluster cards, the machine page
     * and the API: reachable with fresh facts, and no column holding it back (macOS at the target, RDMA on, cabling
     * passing, no drift; each column says what holds a machine back, {@link StatusColumn#blocksReadiness(Status)}).
     */
    public boolean ready() {
        return cells.stream().noneMatch(Cell::blocksReadiness);
    }

    /** What keeps it from being ready, one line per column, empty when it is ready. */
    public List<String> notReadyBecause() {
        return cells.stream().filter(Cell::blocksReadiness).map(cell -> cell.column() + ": " + cell.status().label()).toList();
    }
}
