package io.macfleet.models;

import io.macfleet.database.Jdbc;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/** The catalogue's rows (migration V11_27): a model and its files, written and removed in one transaction. */
final class CatalogueStore {

    /** A stored model with what the contract record does not carry. */
    /** @param heldOn the Mac that holds the files (model add --via), empty when the control host does */
    record Entry(CatalogueModel model, ModelShape shape, Optional<String> weights, String addedBy, Instant addedAt, Optional<String> heldOn) {
        Entry(CatalogueModel model, ModelShape shape, Optional<String> weights, String addedBy, Instant addedAt) {
            this(model, shape, weights, addedBy, addedAt, Optional.empty());
        }
    }

    private final DataSource dataSource;

    CatalogueStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Inserts the model; false when a model of that name is already there (nothing changed). */
    boolean insert(Entry entry) {
        return Jdbc.inTransaction(dataSource, connection -> {
            if (!Jdbc.query(connection, "select name from model_catalogue where name = ?", rows -> rows.getString(1),
                    entry.model().name()).isEmpty()) {
                return false;
            }
            CatalogueModel model = entry.model();
            Jdbc.update(connection, "insert into model_catalogue (name, format, architecture, quantization, total_bytes, runtimes, source,"
                            + " weights, layers, key_value_heads, head_dimension, context_length, added_by, added_at, held_on)"
                            + " values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    model.name(), model.format(), cap(model.architecture(), 100), cap(model.quantization(), 50), model.totalBytes(),
                    String.join(",", model.runtimes()), cap(model.source(), 2000), entry.weights().orElse(null), entry.shape().layers(),
                    entry.shape().keyValueHeads(), entry.shape().headDimension(), entry.shape().contextLength(), cap(entry.addedBy(), 200),
                    entry.addedAt().atOffset(ZoneOffset.UTC), entry.heldOn().orElse(null));
            for (ModelFile file : model.files()) {
                Jdbc.update(connection, "insert into model_file (model_name, path, size, sha256) values (?, ?, ?, ?)",
                        model.name(), file.path(), file.size(), file.sha256());
            }
            return true;
        });
    }

    boolean delete(String name) {
        return Jdbc.inTransaction(dataSource, connection -> {
            Jdbc.update(connection, "delete from model_file where model_name = ?", name);
            return Jdbc.update(connection, "delete from model_catalogue where name = ?", name) > 0;
        });
    }

    Optional<Entry> find(String name) {
        return read("where name = ?", name).stream().findFirst();
    }

    List<Entry> all() {
        return read("");
    }

    private List<Entry> read(String where, Object... parameters) {
        return Jdbc.withConnection(dataSource, connection -> {
            List<Object[]> rows = Jdbc.query(connection, "select * from model_catalogue " + where + " order by name", CatalogueStore::row,
                    parameters);
            Map<String, List<ModelFile>> files = new LinkedHashMap<>();
            for (Object[] row : rows) {
                String name = (String) row[0];
                files.put(name, Jdbc.query(connection, "select path, size, sha256 from model_file where model_name = ? order by path",
                        file -> new ModelFile(file.getString(1), file.getLong(2), file.getString(3)), name));
            }
            List<Entry> entries = new ArrayList<>();
            for (Object[] row : rows) {
                String name = (String) row[0];
                CatalogueModel model = new CatalogueModel(name, (String) row[1], (String) row[2], (String) row[3], files.get(name),
                        (Long) row[4], Arrays.stream(((String) row[5]).split(",")).filter(runtime -> !runtime.isEmpty()).toList(),
                        (String) row[6]);
                entries.add(new Entry(model, (ModelShape) row[8], Optional.ofNullable((String) row[7]), (String) row[9], (Instant) row[10],
                        Optional.ofNullable((String) row[11])));
            }
            return entries;
        });
    }

    private static Object[] row(ResultSet rows) throws SQLException {
        return new Object[] {rows.getString("name"), rows.getString("format"), rows.getString("architecture"), rows.getString("quantization"),
            rows.getLong("total_bytes"), rows.getString("runtimes"), rows.getString("source"), rows.getString("weights"),
            new ModelShape(rows.getInt("layers"), rows.getInt("key_value_heads"), rows.getInt("head_dimension"), rows.getInt("context_length")),
            rows.getString("added_by"), rows.getTimestamp("added_at").toInstant(), rows.getString("held_on")};
    }

    private static String cap(String text, int length) {
        return text.length() <= length ? text : text.substring(0, length);
    }
}
