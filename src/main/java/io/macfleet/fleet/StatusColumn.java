package io.macfleet.fleet;

/**
 * One status column of the fleet view (the overview table, the cluster page's machine table and the machine page).
 * A column is a CDI bean ({@code @ApplicationScoped} or {@code @Singleton}) implementing this interface; the
 * console finds every such bean by injection and shows them by {@link #order()}, so a new column is a new class and
 * no shared class changes. A cell that is a problem puts its machine among the problems (top of the overview).
 */
public interface StatusColumn {

    /** The column's heading in the tables, short: {@code RDMA}. */
    String name();

    /** The heading on the machine page, where there is room for more words; the table heading unless overridden. */
    default String title() {
        return name();
    }

    /**
     * Where the column stands, left to right; the built-in columns use 100, 200, ... 700 so that a new one can go
     * between two of them.
     */
    int order();

    /** The cell of one machine: a pure function of its state (no I/O; the state was read once for the whole fleet). */
    Status cell(MachineState machine);

    /** Whether this cell keeps its machine from being ready ({@link MachineRow#ready()}); problems do by default. */
    default boolean blocksReadiness(Status cell) {
        return cell.isProblem();
    }
}
