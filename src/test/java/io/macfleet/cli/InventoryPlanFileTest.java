package io.macfleet.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.ExampleInventory;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Terraform habits: plan's detailed exit code, a saved plan applied exactly or refused, apply's confirmation. */
class InventoryPlanFileTest {

    private static int databases;

    @TempDir
    Path directory;
    private AgroalDataSource dataSource;
    private DesiredStateStore store;

    private record Run(int exitCode, String out, String err) {
    }

    /** A person at a terminal who answers with the given words, in order. */
    private static final class Person implements InventoryCommand.Confirmation {
        final List<String> questions = new ArrayList<>();
        private final List<String> answers;

        Person(String... answers) {
            this.answers = new ArrayList<>(List.of(answers));
        }

        @Override
        public boolean available() {
            return true;
        }

        @Override
        public boolean confirm(String question) {
            questions.add(question);
            return answers.removeFirst().equals("yes");
        }
    }

    @BeforeEach
    void open() {
        dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:plan-file-" + databases++ + ";DB_CLOSE_DELAY=-1", "sa", null));
        store = new DesiredStateStore(dataSource);
    }

    @AfterEach
    void close() {
        io.macfleet.database.Jdbc.withConnection(dataSource, connection -> connection.createStatement().execute("shutdown"));
        dataSource.close();
    }

    private Run plan(String... arguments) {
        InventoryCommand.PlanCommand command = new InventoryCommand.PlanCommand();
        command.store = store;
        return run(command, arguments);
    }

    private Run apply(InventoryCommand.Confirmation confirmation, String... arguments) {
        InventoryCommand.Apply command = new InventoryCommand.Apply();
        command.store = store;
        command.confirmation = confirmation;
        return run(command, arguments);
    }

    private static final InventoryCommand.Confirmation NO_TERMINAL = new InventoryCommand.Confirmation() {
        @Override
        public boolean available() {
            return false;
        }

        @Override
        public boolean confirm(String question) {
            throw new AssertionError("asked without a terminal: " + question);
        }
    };

    private static Run run(Object command, String... arguments) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = PlainCommandLine.configure(new CommandLine(command));
        commandLine.setOut(new PrintWriter(out));
        commandLine.setErr(new PrintWriter(err));
        int exitCode = commandLine.execute(arguments);
        return new Run(exitCode, out.toString(), err.toString());
    }

    private Path example() throws Exception {
        Path inventory = directory.resolve("inventory");
        ExampleInventory.writeTo(inventory, false);
        return inventory;
    }

    @Test
    void detailedExitCodeSaysWhetherThereAreChanges() throws Exception {
        Path inventory = example();

        assertThat(plan("--detailed-exitcode", inventory.toString()).exitCode()).isEqualTo(4);
        assertThat(plan(inventory.toString()).exitCode()).isZero();
        assertThat(apply(NO_TERMINAL, inventory.toString()).exitCode()).isZero();
        Run unchanged = plan("--detailed-exitcode", inventory.toString());
        assertThat(unchanged.exitCode()).isZero();
        assertThat(unchanged.out()).contains("No changes.");
    }

    @Test
    void aSavedPlanAppliesExactlyWhatWasPlannedEvenIfTheDirectoryChangedAfterwards() throws Exception {
        Path inventory = example();
        Path planFile = directory.resolve("changes.plan");

        Run planned = plan("--out", planFile.toString(), inventory.toString());
        assertThat(planned.exitCode()).as(planned.err()).isZero();
        assertThat(planned.out()).contains("Saved the plan to " + planFile);
        assertThat(Files.getPosixFilePermissions(planFile)).containsExactlyInAnyOrder(
                java.nio.file.attribute.PosixFilePermission.OWNER_READ, java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
        // The directory is edited after planning: the saved plan still applies what was planned.
        for (Path file : Files.list(inventory).toList()) {
            Files.writeString(file, "machines: []\n");
        }

        Run applied = apply(NO_TERMINAL, planFile.toString());

        assertThat(applied.exitCode()).as(applied.err()).isZero();
        assertThat(applied.out()).contains("Apply complete: ").doesNotContain(" 0 added");
        assertThat(store.inventory().machines()).hasSize(4);
    }

    @Test
    void aSavedPlanIsRefusedWhenTheStoredStateMoved() throws Exception {
        Path inventory = example();
        Path planFile = directory.resolve("changes.plan");
        assertThat(plan("--out", planFile.toString(), inventory.toString()).exitCode()).isZero();
        assertThat(apply(NO_TERMINAL, inventory.toString()).exitCode()).isZero();

        Run stale = apply(NO_TERMINAL, planFile.toString());

        assertThat(stale.exitCode()).isEqualTo(1);
        assertThat(stale.err()).contains("the stored desired state changed since the plan was made").contains("nothing was applied");
        Run notAPlan = apply(NO_TERMINAL, Files.writeString(directory.resolve("other.json"), "{}").toString());
        assertThat(notAPlan.exitCode()).isEqualTo(2);
        assertThat(notAPlan.err()).contains("not a plan saved by macfleet inventory plan --out");
    }

    @Test
    void applyAsksOnATerminalUnlessYes() throws Exception {
        Path inventory = example();
        Person declines = new Person("no");

        Run declined = apply(declines, inventory.toString());

        assertThat(declined.exitCode()).isEqualTo(1);
        assertThat(declines.questions).containsExactly("Apply these changes to the stored desired state? Only 'yes' is accepted: ");
        assertThat(declined.out()).contains("Plan: 5 to add").contains("Apply cancelled: nothing was changed.");
        assertThat(store.inventory().machines()).isEmpty();

        Person agrees = new Person("yes");
        assertThat(apply(agrees, inventory.toString()).exitCode()).isZero();
        assertThat(store.inventory().machines()).hasSize(4);

        Files.writeString(inventory.resolve("zz-more.yaml"), "machines: []\n");
        Person neverAsked = new Person();
        assertThat(apply(neverAsked, "--yes", inventory.toString()).exitCode()).isZero();
        assertThat(neverAsked.questions).isEmpty();
    }
}
